"""rbdspy.optimizers"""
