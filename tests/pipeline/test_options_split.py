"""Validation splits (`npyio._pipeline.options.split`): which samples are validation depends only
on the samples, ``validation_split`` and ``seed``. Two calls that differ in any other option
cut disjoint subsets that cover every sample, on every source kind."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import npyio
from npyio._pipeline.capabilities import HONOURED, OPTIONS
from npyio._pipeline.options import SplitOptions, split
from npyio._sources.kinds import KINDS
from npyio._sources.plan import FILES
from npyio._sources.rows_plan import ROWS
from tests.pipeline.test_capabilities import SAMPLES, open_kind, write_sources

N = 20  # files; 60 rows
#: Options that are the split itself, or that leave samples out by design.
NOT_COMPARED = {"validation_split", "subset", "seed", "shard", "drop_remainder"}
#: What an option's sample needs besides itself to be valid here: patch sampling needs a random
#: crop (`SAMPLES` gives each option alone, for the capability table's refusals).
NEEDS: dict[str, dict[str, object]] = {
    "crops_per_file": {"crop": (2,)},
    "foreground": {"crop": (2,)},
}


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, object]:
    return write_sources(tmp_path_factory.mktemp("split"), N)


def sample_ids(ds: object, kind: str) -> list[int]:
    """The samples ``ds`` delivers: file ``i``'s input is all ``i``, and row ``r`` of the
    labels holds ``r`` (`npyio.rows` numbers rows)."""
    out: list[int] = []
    for element in ds:  # type: ignore[attr-defined]
        if kind == ROWS:
            out += np.asarray(element[1]).reshape(-1).tolist()
        else:
            x = np.asarray(element[0] if isinstance(element, tuple) else element)
            out += x[..., 0, 0].reshape(-1).astype(int).tolist()  # (batch,) rows, 2 columns
    return out


def other_options(kind: str) -> list[str]:
    uses = KINDS[kind].uses
    return [o for o in OPTIONS if uses[o].status == HONOURED and o not in NOT_COMPARED]


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_split_does_not_move_with_any_other_option(sources, kind):
    total = N if kind != ROWS else 3 * N
    split_kw = {"validation_split": 0.3, "seed": 4}
    validation = sample_ids(open_kind(kind, sources, "", subset="validation", **split_kw), kind)
    assert len(validation) == int(0.3 * total) == len(set(validation))
    # what the old split did unshuffled (the last files): a draw here
    assert sorted(validation) != list(range(total - len(validation), total))
    training = sample_ids(open_kind(kind, sources, "", subset="training", **split_kw), kind)
    assert sorted(training + validation) == list(range(total))
    names = other_options(kind)
    assert "shuffle" in names or kind == ROWS
    # With another option, "both" alone: its two datasets are planned as "training" and
    # "validation" are (npyio._sources.plan builds one plan per subset the split returns).
    for option in names:
        kw = {**SAMPLES[option], **NEEDS.get(option, {}), **split_kw}
        both = open_kind(kind, sources, option, **{**kw, "subset": "both"})
        moved, held = (sample_ids(ds, kind) for ds in both)
        if option == "crops_per_file":  # each file's crops, all in its one subset
            k = int(kw["crops_per_file"])  # type: ignore[call-overload]
            assert Counter(moved + held) == dict.fromkeys(moved + held, k), kind
            moved, held = sorted(set(moved)), sorted(set(held))
        assert set(moved).isdisjoint(validation), f"{option} on {kind}: subsets overlap"
        assert sorted(moved + validation) == list(range(total)), f"{option} on {kind}"
        assert sorted(held) == sorted(validation), f"{option} on {kind}"


def test_the_shuffle_orders_a_subset_and_does_not_pick_it(sources):
    kw = {"validation_split": 0.3, "subset": "validation", "seed": 4}
    plain = sample_ids(open_kind(FILES, sources, "", **kw), FILES)
    shuffled = sample_ids(open_kind(FILES, sources, "", shuffle=True, **kw), FILES)
    assert plain == sorted(shuffled, key=str)  # unshuffled: in file order (by name)
    rows = sample_ids(npyio.rows(sources["x"], sources["y"], batch_size=None, **kw), ROWS)
    listed = [3 * i + k for i in sorted(range(N), key=str) for k in range(3)]  # by file name
    positions = [listed.index(r) for r in rows]
    assert positions == sorted(positions)


def test_the_split_is_a_seeded_draw_in_keras_count():
    training, validation = split(10, SplitOptions(0.25, "both"), seed=0)
    order = np.random.RandomState(0).permutation(10)
    assert validation.tolist() == sorted(order[-2:].tolist())  # int(0.25 * 10) = 2
    assert training.tolist() == sorted(order[:-2].tolist())
    assert split(10, SplitOptions(0.25, "validation"), seed=1)[0].tolist() != validation.tolist()
    assert split(10, SplitOptions(), seed=None)[0].tolist() == list(range(10))


@pytest.mark.parametrize("fraction", [0.1, 0.2, 0.25, 0.5, 0.77])
def test_stratified_split_holds_every_class_in_proportion(fraction):
    sizes = [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]  # scikit-learn's digits
    strata = np.repeat(np.arange(10), sizes)
    rng = np.random.RandomState(0)
    strata = strata[rng.permutation(len(strata))]  # classes interleaved, as files may be
    training, validation = split(len(strata), SplitOptions(fraction, "both"), seed=3, strata=strata)
    assert len(validation) == int(fraction * len(strata))  # Keras's count
    assert sorted(training.tolist() + validation.tolist()) == list(range(len(strata)))
    held = np.bincount(strata[validation], minlength=10)
    assert np.all(np.abs(held - fraction * np.asarray(sizes)) < 1)  # each class its share
    again = split(len(strata), SplitOptions(fraction, "validation"), seed=3, strata=strata)
    assert again[0].tolist() == validation.tolist()


def test_stratified_quotas_round_by_the_largest_remainders():
    strata = np.repeat(np.arange(3), [5, 4, 6])
    (validation,) = split(15, SplitOptions(0.3, "validation"), seed=0, strata=strata)
    assert np.bincount(strata[validation]).tolist() == [1, 1, 2]  # 1.5, 1.2, 1.8 -> 4


def test_a_split_without_a_seed_is_refused_saying_what_to_pass():
    with pytest.raises(ValueError, match=r"needs a seed.*same seed \(e\.g\. seed=0\)"):
        SplitOptions(0.2, "validation").check(None)
    with pytest.raises(ValueError, match=r"needs a seed"):
        npyio.rows(["unused.npy"], validation_split=0.2, subset="both")
    SplitOptions(0.2, "validation").check(0)
