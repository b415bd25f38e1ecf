"""The gold-path cache file."""

import pytest

from rbdspy.envs.gold_cache import GoldCache


def test_round_trip_sorted(tmp_path):
    path = tmp_path / "sub" / "gold.json"
    cache = GoldCache(path)
    cache.put("twx/coin/train/2", ["b"])
    cache.put("twx/coin/train/1", ["a", "take coin"])
    again = GoldCache(path)
    assert len(again) == 2 and again.get("twx/coin/train/1") == ["a", "take coin"] and "twx/coin/train/3" not in again
    assert path.read_text().index("train/1") < path.read_text().index("train/2")


@pytest.mark.parametrize(
    ("text", "message"), [("{oops", "not valid JSON"), ('{"a": "not a list"}', "must map task ids")]
)
def test_bad_files_say_what_to_do(tmp_path, text, message):
    path = tmp_path / "gold.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"{message}.*delete it"):
        GoldCache(path)
