"""Moved to `rbdspy.ray_support`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.ray_support import (  # noqa: F401
    INSTALL_HINT,
    NotPicklableError,
    RayMissingError,
    check_picklable,
    ensure_ray,
    get,
    import_ray,
)
