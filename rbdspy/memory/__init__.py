"""rbdspy.memory"""
