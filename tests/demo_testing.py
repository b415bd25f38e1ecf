"""What the demo tests share: an environment the demo must not close (the test closes it)."""


class Unclosed:
    """An open environment handed to the demo, which closes what it opens: this one stays open."""

    def __init__(self, env):
        self._env = env

    def __getattr__(self, name):
        return getattr(self._env, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass
