"""Memory that travels: an episode as typed data (`Experience`, from the places the environment
names and its actions as the adapter types them), each past episode as a procedure with slots
(`procedure`), the map of a world that persists learned from every episode of it (`WorldMap`; one
per world, kept from the store: `WorldMaps`), and the next step offered to an agent (`Guide`, and
`Why` it offered it; `EnvironmentTools` for a user's own `dspy.ReAct`). Nothing here knows a game's
words: the adapters of rbdspy/envs/ name the places and things and type the actions."""

from rbdspy.maps.experience import experience_of, render_experience
from rbdspy.maps.guide import Guide, Offer
from rbdspy.maps.procedure import Procedure, ProcedureStep, procedure_of
from rbdspy.maps.slots import said_for
from rbdspy.maps.tools import EnvironmentTools
from rbdspy.maps.why import Why
from rbdspy.maps.world_map import Way, WorldMap
from rbdspy.maps.world_maps import WorldMaps

__all__ = [
    "EnvironmentTools",
    "Guide",
    "Offer",
    "Procedure",
    "ProcedureStep",
    "Way",
    "Why",
    "WorldMap",
    "WorldMaps",
    "experience_of",
    "procedure_of",
    "render_experience",
    "said_for",
]
