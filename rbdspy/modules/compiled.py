"""Moved to `rbdspy.loop.compiled_prompts`, where the code lives. This module re-exports it so that the old path
keeps working for imports and for pickles written before the move."""

from rbdspy.loop.compiled_prompts import (  # noqa: F401
    COMPONENT_FILES,
    DEFAULT,
    MAX_DEMOS,
    MAX_FILE_BYTES,
    PACKAGE_COMPILED_DIR,
    load_component,
    load_directory,
    load_state_file,
    read_prompt_state,
    resolve,
)
