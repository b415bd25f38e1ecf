"""rbdspy.signatures"""
