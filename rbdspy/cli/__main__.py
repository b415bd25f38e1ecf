"""`python -m rbdspy.cli`: the `rbdspy` command."""

from rbdspy.cli import main

main()
