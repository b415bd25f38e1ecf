"""rbdspy.lm"""
