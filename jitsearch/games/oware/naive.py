"""A deliberately plain Oware reference: OpenSpiel's ``oware.cc`` transcribed
line by line into Python (one seed at a time, a set of boards for the
repetition rule), plus the two options of :mod:`.rules`. Tests check the
compiled rules against it on hand-built positions OpenSpiel cannot start
from; the lockstep tests check both against OpenSpiel itself."""

from __future__ import annotations

MIN_CAPTURE, MAX_CAPTURE = 2, 3


class NaiveOware:
    """``seeds`` (2m houses), ``score`` [2], ``player``; ``move_limit`` plies."""

    def __init__(self, seeds, score=(0, 0), player=0, move_limit=1000, grand_slam_illegal=False):
        self.m = len(seeds) // 2
        self.seeds = list(seeds)
        self.score = list(score)
        self.player = player
        self.total = sum(seeds) + sum(score)
        self.move_limit = move_limit
        self.grand_slam_illegal = grand_slam_illegal
        self.plies = 0
        self.seen = {self._key()}

    def _key(self):
        return (self.player, tuple(self.score), tuple(self.seeds))

    def copy(self):
        c = NaiveOware.__new__(NaiveOware)
        c.__dict__ = {k: (list(v) if isinstance(v, list) else set(v) if isinstance(v, set) else v)
                      for k, v in self.__dict__.items()}
        return c

    def is_terminal(self):
        limit = self.total // 2
        s0, s1 = self.score
        return s0 > limit or s1 > limit or (s0 == limit and s1 == limit)

    def returns(self):
        if not self.is_terminal() or self.score[0] == self.score[1]:
            return [0.0, 0.0]
        return [1.0, -1.0] if self.score[0] > self.score[1] else [-1.0, 1.0]

    def legal_houses(self):
        if self.is_terminal():
            return []
        m, p = self.m, self.player
        lower, upper = p * m, p * m + m - 1
        opp = sum(self.seeds[(1 - p) * m:(2 - p) * m])
        out = []
        for house in range(lower, upper + 1):
            ok = self.seeds[house] - (upper - house) > 0 if opp == 0 else self.seeds[house] > 0
            if ok and self.grand_slam_illegal:
                trial = self.copy()
                trial.grand_slam_illegal = False
                last = trial._distribute(house)
                ok = not (trial._in_opponent_row(last) and trial._is_grand_slam(last))
            if ok:
                out.append(house)
        return out

    def _distribute(self, house):
        n = 2 * self.m
        left = self.seeds[house]
        self.seeds[house] = 0
        index = house
        while left > 0:
            index = (index + 1) % n
            if index != house:
                self.seeds[index] += 1
                left -= 1
        return index

    def _in_opponent_row(self, house):
        return house // self.m != self.player

    def _is_grand_slam(self, house):
        lower = (house // self.m) * self.m
        upper = lower + self.m - 1
        if any(self.seeds[i] > 0 for i in range(house + 1, upper + 1)):
            return False
        return all(MIN_CAPTURE <= self.seeds[i] <= MAX_CAPTURE for i in range(lower, house + 1))

    def _capture_from(self, house):
        lower = (house // self.m) * self.m
        captured = 0
        for i in range(house, lower - 1, -1):
            if MIN_CAPTURE <= self.seeds[i] <= MAX_CAPTURE:
                captured += self.seeds[i]
                self.seeds[i] = 0
            else:
                break
        self.score[self.player] += captured
        return captured

    def _collect(self):
        for h in range(2 * self.m):
            self.score[h // self.m] += self.seeds[h]
            self.seeds[h] = 0

    def play(self, house):
        assert house in self.legal_houses()
        last = self._distribute(house)
        if self._in_opponent_row(last) and not self._is_grand_slam(last):
            if self._capture_from(last) > 0:
                self.seen.clear()
        self.player = 1 - self.player
        self.plies += 1
        key = self._key()
        if key in self.seen:
            self._collect()
        self.seen.add(key)
        if self.plies >= self.move_limit and not self.is_terminal():
            self._collect()
        if not self.legal_houses():
            self._collect()

    def board(self):
        """Our layout: houses then the two scores."""
        return self.seeds + self.score
