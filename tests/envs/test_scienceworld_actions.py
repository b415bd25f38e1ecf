"""The compact ScienceWorld action list, on synthetic simulator output (no JVM)."""

from rbdspy.envs.scienceworld_actions import (
    CONNECT,
    FOCUS,
    GO,
    MOVE,
    OPEN,
    PICK_UP,
    PUT_DOWN,
    TEMPLATE_HINTS,
    USE,
    compact_actions,
)

CLASSES = {
    1: "scienceworld.objects.location.Room",
    2: "scienceworld.objects.portal.Door",
    3: "scienceworld.objects.devices.Stove",
    4: "scienceworld.objects.containers.MetalPot",
    5: "scienceworld.objects.substance.food.Orange",
    6: "scienceworld.objects.containers.furniture.Table",
    7: "scienceworld.objects.devices.Thermometer",
    8: "scienceworld.objects.electricalcomponent.Terminal",
}


def combo(action, template, *types):
    return {"action": action, "template_id": template, "obj_ids": list(range(len(types))), "type_ids": list(types)}


COMBOS = [
    combo("go to hallway", GO, 1),
    combo("open door to hallway", OPEN, 2),
    combo("pick up table", PICK_UP, 6),
    combo("pick up metal pot", PICK_UP, 4),
    combo("put down thermometer", PUT_DOWN, 7),
    combo("focus on kitchen", FOCUS, 1),
    combo("focus on metal pot", FOCUS, 4),
    combo("move thermometer to stove", MOVE, 7, 3),
    combo("move thermometer to table", MOVE, 7, 6),
    combo("move metal pot to stove", MOVE, 4, 3),  # the pot is not held
    combo("move thermometer to kitchen", MOVE, 7, 1),
    combo("use thermometer on metal pot", USE, 7, 4),
    combo("connect metal pot to stove", CONNECT, 4, 3),
    combo("connect wire terminal 1 to wire terminal 2", CONNECT, 8, 8),
]


def test_keeps_sensible_state_valid_actions_and_appends_templates():
    actions = compact_actions(COMBOS, CLASSES, "Your task is to boil water in the metal pot.")
    concrete = actions[: -len(TEMPLATE_HINTS)]
    assert actions[-len(TEMPLATE_HINTS) :] == list(TEMPLATE_HINTS)
    assert concrete[:3] == ["look around", "inventory", "task"]
    for kept in [
        "go to hallway",
        "open door to hallway",
        "pick up metal pot",
        "put down thermometer",
        "focus on metal pot",
        "move thermometer to stove",
        "use thermometer on metal pot",
        "connect wire terminal 1 to wire terminal 2",
    ]:
        assert kept in concrete, kept
    for dropped in [
        "pick up table",
        "focus on kitchen",
        "move metal pot to stove",
        "move thermometer to kitchen",
        "connect metal pot to stove",
    ]:
        assert dropped not in concrete, dropped
    # devices before furniture as a destination
    assert concrete.index("move thermometer to stove") < concrete.index("move thermometer to table")


def test_cap_is_respected():
    many = [combo(f"pick up pebble {i}", PICK_UP, 4) for i in range(200)]
    actions = compact_actions(many, CLASSES, max_actions=20, templates=False)
    assert len(actions) == 20 and actions[:3] == ["look around", "inventory", "task"]
