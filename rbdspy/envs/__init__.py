"""rbdspy.envs"""
