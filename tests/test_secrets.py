"""Secret seeds (reference/secrets.py): secret randomness never derives from public inputs."""

import json
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.rng import SEED_BOUND, Streams
from reference.secrets import (
    SecretSeed,
    fresh_secret_seed,
    replicate_seeds,
    secret_seed,
    secret_seeds,
)


def test_default_is_fresh_entropy():
    a, b = secret_seed(None, public_seeds=[0]), secret_seed(None, public_seeds=[0])
    assert a.source == b.source == "os_entropy" and not a.user_supplied
    assert a != b  # 128 fresh bits each
    assert a.streams().generator("dpzero", "noise").random() != b.streams().generator("dpzero", "noise").random()


def test_user_seed_equal_to_a_public_seed_is_refused():
    with pytest.raises(ValueError, match="noise_seed must differ from every public seed"):
        secret_seed(7, public_seeds=[7])
    with pytest.raises(ValueError, match="differ from every public seed"):
        secret_seed(SecretSeed(7, "user"), public_seeds=(3, 7))
    with pytest.raises(ValueError, match=r"noise_seed\[1\]"):
        secret_seeds([5, 11], 2, public_seeds=[11, 12])


def test_user_seed_recorded_with_its_condition():
    s = secret_seed(12345, public_seeds=[0])
    assert s.user_supplied and "stays secret" in s.guarantee_condition and "2^64" in s.guarantee_condition
    big = secret_seed(2**100 + 3, public_seeds=[0])
    assert "2^64" not in big.guarantee_condition
    assert "operating-system entropy" in fresh_secret_seed().guarantee_condition
    # seeds spawned from a small user seed are as searchable as it is
    assert all("2^64" in child.guarantee_condition for child in s.spawn(3))
    assert all("2^64" not in child.guarantee_condition for child in big.spawn(2))
    assert pickle.loads(pickle.dumps(s.spawn(1)[0])).guarantee_condition == s.guarantee_condition


@pytest.mark.parametrize("bad, error", [(-1, ValueError), (SEED_BOUND, ValueError), (1.5, TypeError),
                                        ("3", TypeError), (True, TypeError)])
def test_bad_secret_seed_named(bad, error):
    with pytest.raises(error, match="noise_seed"):
        secret_seed(bad, public_seeds=[0])


def test_secret_value_never_printed_nor_serialisable():
    value = 918273645546372819
    s = secret_seed(value, public_seeds=[0])
    for text in (repr(s), str(s), f"{s}", repr([s])):
        assert str(value) not in text and "hidden" in text
    with pytest.raises(TypeError):
        json.dumps(s)
    assert pickle.loads(pickle.dumps(s)) == s  # process pools may carry it, never a report


def test_replicate_seeds_are_spawned_not_offset():
    assert replicate_seeds(5, 1) == (5,)
    seeds = replicate_seeds(5, 4)
    assert len(set(seeds)) == 4 and all(0 <= s < SEED_BOUND for s in seeds)
    assert not set(seeds) & set(range(0, 5 + 64)) and not set(seeds) & set(replicate_seeds(6, 4))
    assert seeds == tuple(int(x) for x in seeds) == replicate_seeds(5, 4)  # deterministic: they are public


def test_secret_replicates_spawned_and_distinct():
    public = replicate_seeds(0, 3)
    spawned = secret_seeds(None, 3, public_seeds=public)
    assert len({s.entropy for s in spawned}) == 3 and not {s.entropy for s in spawned} & set(public)
    user = secret_seeds(99, 3, public_seeds=public)
    assert all(s.user_supplied for s in user) and user == secret_seeds(99, 3, public_seeds=public)
    assert secret_seeds(99, 1, public_seeds=[0]) == (SecretSeed(99, "user"),)
    with pytest.raises(ValueError, match="distinct"):
        secret_seeds([4, 4], 2, public_seeds=[0])
    with pytest.raises(ValueError, match="one secret seed per replicate"):
        secret_seeds([4, 5], 3, public_seeds=[0])


@given(st.integers(0, 2**128 - 1), st.integers(1, 4))
@settings(max_examples=30, deadline=None)
def test_a_secret_equal_to_the_public_seed_is_always_caught(seed, replicates):
    with pytest.raises(ValueError):
        secret_seeds(seed, replicates, public_seeds=(seed, *replicate_seeds(seed, replicates)))


def test_user_secret_stream_is_the_plain_streams_of_its_value():
    # Runs given an explicit secret seed S draw exactly Streams(S): results stay reproducible for the holder of S.
    s = secret_seed(42, public_seeds=[0])
    np.testing.assert_array_equal(s.streams().generator("dpzero", "noise").standard_normal(5),
                                  Streams(42).generator("dpzero", "noise").standard_normal(5))
