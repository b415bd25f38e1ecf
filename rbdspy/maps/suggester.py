"""The next step a map offers an agent during one episode.

From wherever the agent is now, towards the task's first target not yet done (`targets.py`): the
first way of the shortest path the map knows, or, where that way is not open yet, what was done
first where it was learned (a door opened; not again once done here and the way stayed shut); in
the target's place, the action that once put the thing in hand. A target not in view in a place it
was seen in (for a kind of thing, none of those that satisfied it there) is looked for in the next
place, never back where it was searched; where it is in view now comes first. A thing the task
names that is in none of its places is passed over for what the task names next (a box moved to the
room the task names). A suggestion is always one of the admissible actions the environment lists
now, as it writes it (or, for what an episode went on to do with a thing in view, an action filling
a template the list holds), or nothing: never text from memory. Whether the agent plays it is the
agent's aids' to say (`rbdspy.agent.agent_loop`).

For a kind of thing ("find an animal"), in a place where such things were found, the step is what
was done there with one that is in view now (its action, when the environment lists it: "focus on
cup", then "pick up cup", then "move cup to blue box"), in the order it was done; once the episode
gave an answer ("focus on lamp"), what a past episode (a won one first) did after its answer, with
this episode's thing ("move lamp to blue box"): for an answer of its own, for the agent to choose (a
step no episode took). A target is done when the thing is in hand (one the map knows how to take),
when an accepted action named it in one of its places (one nobody took: "put mug on stand"), when
the agent reached it (a place), or, for a kind of thing, when the agent came to hold something where
such things were found (or holds what it gave as the answer), or did there all that a won episode
did with one (any episode's, where none won: a lost one may have stopped at its answer). Once that
is done, where the environment names the kind of task, a thing the task names in view and something
held since the episode began make the step what a past task of the kind did with what it held there
("move butterfly to green box").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rbdspy.core.action_templates import fits_a_template
from rbdspy.maps.targets import Target, task_targets
from rbdspy.maps.why import MAX_KNOWN_FROM, Why
from rbdspy.maps.words import (
    admissible_form,
    gained,
    grown,
    located_form,
    names,
    same_action,
    short_name,
    task_names,
    words,
)
from rbdspy.maps.world_map import Handled, WorldMap


class MapSuggester:
    """Follows one episode (`played`) and offers the next step on the map (`suggest`)."""

    def __init__(
        self,
        world: WorldMap,
        task: str,
        place: str | None,
        in_view: Sequence[str] = (),
        carrying: Sequence[str] = (),
        targets: Sequence[Target] | None = None,
        kind: str | None = None,
    ):
        self.map = world
        # The data rule's targets (for the environment's `kind` of task, where it names one) unless
        # chosen otherwise (an LM's: `TargetChooser`).
        self.targets: list[Target] = list(targets) if targets is not None else task_targets(task, world, kind)
        self.kind = kind
        self.task = task
        self.place = place
        self.in_view = list(in_view)
        self.carrying = list(carrying)
        self.at_start = list(carrying)
        self.done = 0  # targets done, in order
        self.searched: set[str] = set()  # places of the current target found without it
        self.stayed: str | None = None  # the last action, when it led nowhere
        self.acted: list[str] = []  # accepted actions that moved nowhere, in order
        self.arrived = 0  # how many of `acted` came before arriving where the agent is now
        self.why: Why | None = None  # why the last step offered was offered (None: none offered)
        self.best = 0.0  # the episode's highest score so far, where the environment says (from 0)
        self.rose: list[str] = []  # accepted actions the score rose on, in order
        # A confirmed answer, and what an action naming it put in hand: an environment may name
        # the thing in hand otherwise ("pick up common toad": a frog egg in the inventory).
        self.took_answer: dict[str, list[str]] = {}
        self._advance(None)

    @property
    def target(self) -> Target | None:
        return self.targets[self.done] if self.done < len(self.targets) else None

    def suggest(self, admissible: Sequence[str]) -> str | None:
        """The next step towards the current target, as `admissible` writes it; None when the map
        knows no way from here or the step is not admissible now."""
        return self.next_step(admissible)[0]

    def next_step(self, admissible: Sequence[str]) -> tuple[str | None, bool, bool]:
        """`suggest`'s step; whether it is on the way to another place (a move, or what was done
        first where the move was learned) rather than something done with a thing; and whether an
        episode did it before (not a guess: a thing no episode took, taken as others were).
        `why` says why, for the step offered."""
        self.why = None
        target = self.target
        if not self.place:
            return None, False, False
        if target is None or not target.kind:  # what satisfies the kind is found: bring it
            step = self._bringing(admissible)
            if step is not None:
                return step, False, True
            step = self._after_confirmed(admissible)
            if step is not None:
                return step, False, True
        if target is None:
            return None, False, False
        # The place it was seen in most first, among those the map knows a way to; but where it is
        # in view now, here, and a confirmed answer in hand is here wherever the agent is.
        way, toward = None, ""
        if self.place in target.places and self._found_here(target) or self._carries_answer(target):
            way, toward = [], self.place
        for place in target.places if way is None else ():
            if place not in self.searched and (way := self.map.way(self.place, [place])) is not None:
                toward = place
                break
        if way is None:
            return None, False, False
        if not way:  # there: take it, where the map knows how
            if target.kind:
                step, handled, like = self._handling(target, admissible)
                why = "handle-like" if like else "handle"
                return self._offer(step, target, toward, why, handled and handled.task), False, not like
            taking = self.map.taking(target.name) if target.carry else None
            if taking:
                step = admissible_form(taking, admissible)
                return self._offer(step, target, toward, "take", self.map.taken_in_task(target.name)), False, True
            # The thing a task names first is the one it fetches: taken as this world takes things.
            first = target.thing and not target.kind and self.done == 0
            step = self.map.taking_like(target.name, admissible) if first else None
            return self._offer(step, target, toward, "take-like", None), False, False
        # A way listed but not open (a closed door some games list the move through) led nowhere
        # when tried: what was done first where the way was learned comes first then; where that
        # is spent, what another episode did first on the same way.
        for edge in self.map.ways_between(way[0]):
            tried_move = self.stayed and same_action(self.stayed, edge.action)
            for step in edge.before if tried_move else (edge.action, *edge.before):
                form = admissible_form(step, admissible)
                # What was done first here already and left the way shut was not what opens it.
                tried = step != edge.action and self._done_here(step)
                if form is not None and not tried and not (self.stayed and same_action(self.stayed, form)):
                    kind = "way" if step == edge.action else "first"
                    return self._offer(form, target, toward, kind, edge.task), True, True
        for step, task in self.map.openings_into(way[0]):
            form = admissible_form(step, admissible)
            if form is not None and not self._done_here(step):
                return self._offer(form, target, toward, "first", task), True, True
        return None, False, False

    def _done_here(self, step: str) -> bool:
        """Whether `step` was done since the agent arrived where it is (it did not open the way)."""
        return any(same_action(step, done) for done in self.acted[self.arrived :])

    def _offer(self, step: str | None, target: Target, toward: str, kind: str, learned_in: str | None) -> str | None:
        """`step`, with `why` set to say why it is offered (left None when there is no step)."""
        if step is not None:
            self.why = Why(target.name, target.kind, toward, kind, learned_in or None, self._known_from(target, toward))
        return step

    def _known_from(self, target: Target, place: str) -> tuple[str, ...]:
        if target.kind:
            tasks = [h.task for h in target.handled if h.place == place]
        elif target.thing:
            tasks = self.map.seen_by(target.name, place)
        else:
            tasks = []
        return tuple(dict.fromkeys(tasks))[:MAX_KNOWN_FROM]

    def played(
        self,
        action: str,
        accepted: bool,
        place: str | None,
        in_view: Sequence[str] = (),
        carrying: Sequence[str] = (),
        score: float | None = None,
    ) -> None:
        """What the agent did, and where it is now, what is in view there and what it carries (and
        the episode's score after it, where the environment keeps one)."""
        if accepted and score is not None and score > self.best:
            self.rose.append(action)
        if score is not None:
            self.best = max(self.best, score)
        new = gained(self.carrying, carrying) if accepted else []
        for answer in self._confirmed_answers() if new else ():
            if names(action, answer):
                self.took_answer[answer] = new
        moved = bool(place) and place != self.place
        self.stayed = None if moved else action
        if moved:
            self.arrived = len(self.acted)
        if accepted and not moved:
            self.acted.append(action)
        self.place = place or self.place
        self.in_view, self.carrying = list(in_view), list(carrying)
        self._advance(action if accepted and not moved else None)

    def played_from(self, action: str, accepted: bool, whereabouts: object | None, score: float | None = None) -> None:
        """`played`, with where the agent is now as an environment's `Whereabouts` (None where
        it names no place)."""
        self.played(
            action,
            accepted,
            getattr(whereabouts, "place", None),
            getattr(whereabouts, "in_view", ()),
            getattr(whereabouts, "carrying", ()),
            score,
        )

    def _advance(self, action: str | None) -> None:
        while (target := self.target) is not None:
            if self.place in target.places and not self._found_here(target):
                self.searched.add(self.place)  # not here this time: look in the next place it was seen
            if not (self._is_done(target, action) or self._nowhere(target)):
                return
            self.done += 1
            self.searched = set()

    def _nowhere(self, target: Target) -> bool:
        """Whether a thing the task names was looked for in every place it was seen, and is in none
        (a box moved since): the map passes on to what the task names next (the room it is in
        now). Not a thing to carry (what the task does with it needs it in hand), nor a kind of
        thing (where such things were found, the agent looks at what is there)."""
        return target.thing and not (target.kind or target.carry) and set(target.places) <= self.searched

    def _found_here(self, target: Target) -> bool:
        """Whether what `target` looks for is in view or in hand here: the thing it names, or, for
        a kind of thing, one that satisfied the kind here before (movable things move between
        tasks: where none is, the kind is looked for in the next place it was found)."""
        if target.kind:
            found = any(self._in_view(h.thing) for h in target.handled if h.place == self.place)
            return found or self._own_answer(target, self.acted[self.arrived :]) is not None
        return not target.thing or self._in_view(target.name)

    def _carries_answer(self, target: Target) -> bool:
        """Whether the agent holds a thing given as a confirmed answer to the kind ("focus on
        orange", with an orange in hand since the episode began): no need to go where one was."""
        return target.kind and any(h.answer and self._holds(h.thing) for h in target.handled)

    @staticmethod
    def _answer(target: Target, acted: Sequence[str]) -> tuple[str | None, bool]:
        """The first of `acted` that gave an answer: begun as the kind's past answers were; and
        whether it is of this episode's own (none of what was done with what satisfied the kind)."""
        answering = {h.action.split()[0].lower() for h in target.handled if h.answer and h.action.split()}
        for done in acted:
            if done.split() and done.split()[0].lower() in answering:
                known = (admissible_form(h.action, [done]) or _grown_action(h, done) for h in target.handled)
                return done, not any(known)
        return None, False

    @classmethod
    def _own_answer(cls, target: Target, acted: Sequence[str]) -> str | None:
        """`_answer`'s, where it is of this episode's own."""
        answer, own = cls._answer(target, acted)
        return answer if own else None

    def _handling(self, target: Target, admissible: Sequence[str]) -> tuple[str | None, Handled | None, bool]:
        """What one past task's episodes did with what satisfied it, in order: once this episode
        has done one of those actions, the next of that task's only; before, the first action of
        the first task the environment lists it for. Tasks whose episodes won come first: a lost
        episode's confirmed answer is not all there was to do. Once this episode gave an answer,
        what a past episode went on to do after its answer, done with this episode's thing
        (`_after_own_answer`); after an answer of its own, no second answer and nothing else (the
        third value says the step is such a guess). With the past handling the step repeats."""
        by_task: dict[str, list[Handled]] = {}
        for handled in sorted(target.handled, key=lambda h: not h.episode_won):
            by_task.setdefault(handled.task, []).append(handled)
        answer, own = self._answer(target, self.acted)
        if answer is not None:
            step, handled = self._after_own_answer(answer, by_task, admissible)
            if own or step is not None:
                return step, handled, own and step is not None
        for handled in by_task.values():
            left = [h for h in handled if not any(same_action(h.action, done) for done in self.acted)]
            if len(left) < len(handled):  # the task this episode follows
                return (self._listed(left[0], admissible), left[0], False) if left else (None, None, False)
        firsts = ((self._listed_first(handled[0], admissible), handled[0]) for handled in by_task.values())
        return next(((step, handled, False) for step, handled in firsts if step), (None, None, False))

    def _after_own_answer(
        self, answer: str, by_task: dict[str, list[Handled]], admissible: Sequence[str]
    ) -> tuple[str | None, Handled | None]:
        """After this episode answered with a thing of its own ("focus on lighter"), what a past
        episode of the kind did after answering as it did ("focus on drawing", then "move drawing
        to blue box"), with the past thing's name replaced by this episode's ("move lighter to
        blue box"), where the list holds it and it was not done yet. Only actions that name the
        past thing: what was done with something else says nothing of this one."""
        for handled in by_task.values():
            given = next((h for h in handled if h.answer), None)
            lead = _answer_lead(given) if given is not None else None
            if lead is None:
                continue
            if not answer.lower().startswith(lead) or not answer[len(lead) :].strip():
                continue
            mine, past = answer[len(lead) :].strip(), given.thing.lower()
            for after in handled[handled.index(given) + 1 :]:
                at = after.action.lower().find(past)
                if at < 0:
                    continue
                step = after.action[:at] + mine + after.action[at + len(past) :]
                if not any(same_action(step, done) for done in self.acted):
                    return self._naming(admissible_form(step, admissible), mine), after
        return None, None

    @staticmethod
    def _naming(listed: str | None, thing: str) -> str | None:
        """`listed` where it names `thing`: a list that shortens an action may drop the thing's own
        words ("pick up apple tree in kitchen", listed as "pick up apple"), and then it is another
        thing's action."""
        return listed if listed is not None and names(listed, thing) else None

    def vouched(self, action: str) -> bool:
        """Whether the environment vouched for `action` as the answer to this kind of task: an
        episode of the kind gave the same answer and the score rose (or the episode won), and no
        episode of the kind gave it to no avail. Only where the environment names kinds of task: an
        answer to one kind says nothing about a task merely worded alike."""
        given = self._given(action)
        return bool(given) and all(h.won for h in given)

    def refuted(self, action: str) -> bool:
        """Whether the environment refuted `action` as the answer to this kind of task: episodes of
        the kind gave the same answer, and in none of them did the score rise or the episode win
        (ScienceWorld ends a task on a wrong focus). Only where the environment names kinds of task."""
        given = self._given(action)
        return bool(given) and all(h.won is False for h in given)

    def _given(self, action: str) -> list[Handled]:
        """The answers past episodes of this kind gave with `action` (none where no kind is named)."""
        if self.kind is None:
            return []
        return [
            h
            for h in self.map.handled
            if h.answer and h.kind == self.kind and (same_action(h.action, action) or _grown_action(h, action))
        ]

    def _bringing(self, admissible: Sequence[str]) -> str | None:
        """Where the environment names this kind of task: the listed action that leaves what this
        episode came to hold, or gave as its answer and holds (by its name, or as what taking it put
        in hand: "pick up common toad" held as a frog egg), with a thing in view that its task
        names, begun as a confirmed past episode of the kind began its own ("move ... to red box");
        `why` names that episode. The action names nothing else held from the start and shares a
        word with what it brings (an environment may name a held thing otherwise than its actions
        do: "butterfly egg" in hand, "move butterfly to green box"; a description in parentheses is
        not part of a name). A thing in view is a place to bring to unless it is what is held (an
        orange box, with an orange in hand)."""
        # Brought as a confirmed past episode of this kind did; where none of this kind brought
        # anything, as one of another kind did, and only an answer the score rose on in this
        # episode (a thing the world confirmed, nothing else picked up on the way).
        own_kind = any(past.kind == self.kind and past.won for past in self.map.brought)
        if own_kind:
            answers = [a for a in self._answers_given() if self._holds_answer(a)]
            brought = [*gained(self.at_start, self.carrying), *answers]
        else:
            answers = brought = [a for a in self._confirmed_answers() if self._holds_answer(a)]
        held = set().union(*(words(short_name(c)) for c in brought))
        kept = [s for s in self.at_start if not any(names(s, a) or names(a, s) for a in answers)]
        named = [t for t in self.in_view if task_names(self.task, t) and not any(names(c, t) for c in self.carrying)]
        if self.kind is None or not held or not named:
            return None
        for past in self.map.brought:
            if not past.won or (own_kind and past.kind != self.kind):
                continue
            verb = past.action.split()[0].lower()
            for action in admissible:
                target = next((t for t in named if names(action, t)), None)
                if action.lower().split()[:1] != [verb] or target is None:
                    continue
                # What it brings is the action less the thing it brings to (an orange box, with an
                # orange held from the start, is not the orange).
                rest = _without(action, target)
                if not any(names(rest, short_name(s)) for s in kept) and (words(rest) - {verb}) & held:
                    self.why = Why(target, False, self.place, "bring", past.task or None)
                    return action
        return None

    def _after_confirmed(self, admissible: Sequence[str]) -> str | None:
        """Where no past episode of this kind of task won (none, or one whose answer was right but
        that did nothing more with it): once the environment confirmed this episode's answer (the
        score rose on "focus on blue jay"), what a won episode of another kind did after its
        confirmed answer, with this episode's thing ("pick up blue jay", where one focused on its
        orange and then picked it up), where listed and not done yet. What a past episode brought
        to a thing its task named is `_bringing`'s, not this: this episode's task names its own.
        `why` names the episode it came from."""
        if self.kind is None or self._kind_won() or not self.rose:
            return None
        brought = {(b.task, b.action) for b in self.map.brought}
        by_task: dict[str, list[Handled]] = {}
        for handled in self.map.handled:
            if handled.episode_won and handled.kind != self.kind and (handled.task, handled.action) not in brought:
                by_task.setdefault(handled.task, []).append(handled)
        by_task = {task: done for task, done in by_task.items() if any(h.answer and h.won for h in done)}
        for answer in self.rose:
            step, handled = self._after_own_answer(answer, by_task, admissible)
            if step is not None and handled is not None:
                self.why = Why(handled.thing, False, self.place or "", "after-answer", handled.task or None)
                return step
        return None

    def _kind_won(self) -> bool:
        """Whether a past episode of this kind of task won (so what to do after its answer is known)."""
        return any(h.episode_won and h.kind == self.kind for h in self.map.handled)

    def knows_answer(self) -> bool:
        """Whether the map leads to an answer: a past episode of this kind of task gave one the
        environment confirmed (where it names no kinds: whether the task has a kind target)."""
        if self.kind is None:
            return any(t.kind for t in self.targets)
        return any(h.answer and h.won and h.kind == self.kind for h in self.map.handled)

    def answer_missing(self) -> bool:
        """Whether this episode stands where a past answer to its kind of task was found, and no
        such thing is in view or in hand here: movable things move between tasks, and the map
        knows no answer here (it leads on to the next place one was found)."""
        target = self.target
        return bool(target and target.kind and self.place in target.places and not self._found_here(target))

    def _confirmed_answers(self) -> list[str]:
        """What this episode gave as answers the environment confirmed: the rest of an action the
        score rose on, begun as a confirmed past answer of any kind was ("focus on blue jay")."""
        return _things_answered(self.rose, (h for h in self.map.handled if h.answer and h.won and h.thing))

    def _answers_given(self) -> list[str]:
        """What this episode gave as the answer to its kind of task: the rest of an action it did
        that began as a past answer of the kind did ("focus on orange": the orange)."""
        given = (h for h in self.map.handled if h.answer and h.kind == self.kind and h.thing)
        return _things_answered(self.acted, given)

    def _listed(self, handled: Handled, admissible: Sequence[str]) -> str | None:
        """`action` as `admissible` lists it; or, where the list holds templates ("move OBJ to
        OBJ": such a list names only part of what the world takes), as written when it fills one
        while the thing it was done with is in view or in hand. Only a follow-up step is read this
        way: a first step must be listed, so nothing out of view is offered first."""
        form = _as_listed(handled.action, admissible)
        if form is not None or not fits_a_template(handled.action, tuple(admissible)):
            return form
        return handled.action if self._in_view(handled.thing) else None

    def _listed_first(self, handled: Handled, admissible: Sequence[str]) -> str | None:
        """A first step as `admissible` lists it (`_as_listed`), naming the same thing; or done with
        a thing in view whose name is the past thing's with words in front ("focus on apple tree",
        with an adult apple tree in view: "focus on adult apple tree"; things grow between tasks)."""
        form = _as_listed(handled.action, admissible)
        at = handled.action.lower().find(handled.thing.lower())
        if at < 0:
            return form
        if form is not None:
            # A list that shortens an action may leave the thing's own words out: then the listed
            # action is another thing's ("focus on apple" for "focus on apple tree").
            return form if names(form, handled.thing) else None
        before, after = handled.action[:at], handled.action[at + len(handled.thing) :]
        grown_here = (short_name(t) for t in self.in_view if grown(short_name(t), handled.thing))
        return next((f for name in grown_here if (f := admissible_form(before + name + after, admissible))), None)

    def _did_all_with_one(self, target: Target) -> bool:
        """Whether this episode did everything one past task's episodes did with what satisfied it:
        a task whose episode won, where there is one (a lost one did too little)."""
        handled = [h for h in target.handled if h.episode_won] or target.handled
        for task in dict.fromkeys(h.task for h in handled):
            actions = [h.action for h in handled if h.task == task]
            if all(any(same_action(a, done) for done in self.acted) for a in actions):
                return True
        return False

    def _in_view(self, name: str) -> bool:
        return self._holds(name) or any(names(t, name) or names(name, t) for t in self.in_view)

    def _holds(self, name: str) -> bool:
        return any(names(c, name) or names(name, c) for c in self.carrying)

    def _holds_answer(self, answer: str) -> bool:
        """Whether this episode holds `answer`: by its name, or what taking it put in hand. A thing
        in hand may be renamed as it changes ("apple tree in the adult stage", then "dead apple
        tree"): one gained since the start that shares a word with the answer is it still."""
        if self._holds(answer):
            return True
        took = self.took_answer.get(answer)
        if not took:
            return False
        renamed = any(words(short_name(c)) & words(answer) for c in gained(self.at_start, self.carrying))
        return all(t in self.carrying for t in took) or renamed

    def _is_done(self, target: Target, action: str | None) -> bool:
        here = self.place in target.places
        if target.kind:  # what satisfied such tasks came to be carried there, or was done with
            answered = any(self._holds(a) for a in self._answers_given())
            held = bool(gained(self.at_start, self.carrying)) or answered
            # Where no episode of the kind won, an answer the environment confirmed is all the map
            # knows to do with the kind: what follows is a won episode's of another kind.
            confirmed = not self._kind_won() and bool(self._confirmed_answers())
            # A confirmed answer in hand, given wherever the agent was, is done with there.
            anywhere = self._carries_answer(target) and (answered or confirmed)
            return anywhere or here and (held or confirmed or self._did_all_with_one(target))
        if not target.thing:
            return here
        if target.carry:
            return self._holds(target.name)
        return here and action is not None and names(action, target.name)


def _as_listed(action: str, admissible: Sequence[str]) -> str | None:
    """`action` as `admissible` lists it, or as it lists it saying where the thing is."""
    return admissible_form(action, admissible) or located_form(action, admissible)


def _grown_action(known: Handled, action: str) -> bool:
    """Whether `action` is `known`'s action with a thing whose name is the known thing's with words
    in front ("focus on adult apple tree" for "focus on apple tree"), or with where the thing is
    ("focus on orange in inventory" for "focus on orange")."""
    if located_form(known.action, [action]):
        return True
    at = known.action.lower().find(known.thing.lower())
    if at < 0 or not known.thing:
        return False
    before, after, done = known.action[:at].lower(), known.action[at + len(known.thing) :].lower(), action.lower()
    if not (done.startswith(before) and done.endswith(after)) or len(done) <= len(before) + len(after):
        return False
    return grown(done[len(before) : len(done) - len(after)], known.thing)


def _without(action: str, thing: str) -> str:
    """`action` less where it says `thing` (the box in "move orange to orange box"), or less the
    thing's words where it says it otherwise."""
    at = action.lower().rfind(thing.lower())
    if at >= 0:
        return action[:at] + action[at + len(thing) :]
    return " ".join(w for w in action.split() if w.lower() not in words(thing))


def _things_answered(actions: Sequence[str], answers: Iterable[Handled]) -> list[str]:
    """The rest of each of `actions` begun as one of the past `answers` was ("focus on blue jay",
    where one answered "focus on orange": the blue jay)."""
    leads = {_answer_lead(h) for h in answers} - {None}
    return [
        done[len(lead) :].strip()
        for done in actions
        for lead in leads
        if done.lower().startswith(lead) and done[len(lead) :].strip()
    ]


def _answer_lead(given: Handled) -> str | None:
    """What an answer's action says before the thing it gave ("focus on " of "focus on orange"),
    lower-cased; None where the action does not end with the thing."""
    if not given.action.lower().endswith(given.thing.lower()):
        return None
    return given.action[: len(given.action) - len(given.thing)].lower()
