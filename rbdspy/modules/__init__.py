"""rbdspy.modules"""
