"""Start rooms (`StartsCatalogue`, the house-starts stream): the same quests, each starting in a
room of its own, its winning actions planned again from there (`replan`) and replayed to win."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

from rbdspy.envs.textworld_house.catalogue import _LOCK, HouseCatalogue, HouseQuest, _write_json
from rbdspy.envs.textworld_house.games import build_game
from rbdspy.envs.textworld_house.moves import replan
from rbdspy.envs.textworld_house.splits import catalogue_position
from rbdspy.envs.textworld_house.world import player_room, start_cycle, with_start


class StartsCatalogue:
    """The quests of a world's catalogue, each starting in a room of its own (the `house-starts`
    stream): the quest at catalogue position p starts in room p of the world's start cycle
    (`start_cycle`, over and over), or in the next room of the cycle from which its winning actions,
    re-planned (`replan`), take at least `min_walkthrough` actions and win the compiled game. The
    world's own start room is one of the cycle; a quest placed there is the house quest as it is.
    Placements are cached in starts.json beside the catalogue, games as quest-<attempt>-<room>.z8."""

    def __init__(self, house: HouseCatalogue):
        self.house = house
        self.dir = house.dir
        self._placed: dict[str, HouseQuest] = {}
        path = self.dir / "starts.json"
        if path.is_file():
            saved = json.loads(path.read_text(encoding="utf-8"))
            self._placed = {key: HouseQuest.from_dict(row) for key, row in saved["quests"].items()}

    def _save(self) -> None:
        payload = {"seed": self.house.seed, "spec": asdict(self.house.spec)}
        payload["quests"] = {key: quest.to_dict() for key, quest in self._placed.items()}
        _write_json(self.dir / "starts.json", payload)

    def quest(self, split: str, index: int) -> HouseQuest:
        """Quest `index` of `split`, starting in its room; its game compiled."""
        base = self.house.quest(split, index)
        key = f"{split}/{index}"
        with _LOCK:
            quest = self._placed.get(key)
            if quest is None:
                quest = self._placed[key] = self._place(base)
                self._save()
            elif not self.game_path(quest).is_file() and self._start_in(base, quest.start) != quest:
                raise RuntimeError(f"quest {key} of world {base.world_seed} no longer starts the same")
        return quest

    def game_path(self, quest: HouseQuest) -> Path:
        return self.dir / quest.game_file

    def _place(self, base: HouseQuest) -> HouseQuest:
        cycle = start_cycle(self.house.world, self.house.seed)
        position = catalogue_position(base.split, base.index)
        for offset in range(len(cycle)):
            quest = self._start_in(base, cycle[(position + offset) % len(cycle)])
            if quest is not None:
                return quest
        raise RuntimeError(f"quest {base.split}/{base.index} of world {base.world_seed} starts in no room")

    def _start_in(self, base: HouseQuest, room: str) -> HouseQuest | None:
        """`base` starting in `room`, compiled; None when it cannot be won from there in
        `min_walkthrough` actions or more."""
        world = self.house.world
        if room == player_room(world.facts):
            return replace(base, start=room)
        moved = with_start(world, room)
        plan = replan(moved, self._policy(base))
        if plan is None:
            return None
        game, goal = build_game(moved, self.house.seed, plan)
        walkthrough = tuple(game.walkthrough or ())
        if goal != base.goal or len(walkthrough) < self.house.spec.min_walkthrough:
            return None
        quest = replace(base, walkthrough=walkthrough, start=room)
        return self.house._compile(quest, game, f"quest-{base.attempt:05d}-{room}.z8")

    def _policy(self, base: HouseQuest):
        """The actions that win `base` from the world's own start (the game's winning policy)."""
        from textworld.generator.game import GameProgression  # optional: textworld (the envs extra)

        game, _ = build_game(self.house.world, self.house.seed, self.house.actions(base))
        return list(GameProgression(game).winning_policy or [])
