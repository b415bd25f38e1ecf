"""Memory that travels: an episode as typed data (`Experience`, from the places the environment
names), the map of a world that persists learned from every episode (`WorldMap`), what a task asks
of it (`targets`; `TargetChooser`, the LM's choice), and the next step offered to an agent
(`MapSuggester`, and `Why` it offered it; `EnvironmentTools` for a user's own `dspy.ReAct`).
Nothing here knows a game's grammar."""

from rbdspy.maps.experience import experience_of, render_experience
from rbdspy.maps.lm_targets import TargetChooser
from rbdspy.maps.suggester import MapSuggester
from rbdspy.maps.targets import Target, task_targets
from rbdspy.maps.tools import EnvironmentTools
from rbdspy.maps.why import Why
from rbdspy.maps.world_map import Edge, WorldMap

__all__ = [
    "Edge",
    "EnvironmentTools",
    "MapSuggester",
    "Target",
    "TargetChooser",
    "Why",
    "WorldMap",
    "experience_of",
    "render_experience",
    "task_targets",
]
