"""Install the book's pinned npm packages into the git-ignored _vendor/: MathJax, so that the book
renders its math offline, and axe-core, the accessibility checker the browser test runs.

The book's pages load MathJax from their own ``_static/mathjax/`` (``mathjax_path`` and
``html_static_path`` in ``_config.yml``), never from a CDN. axe-core is for the tests only:
tests/test_browser.py injects ``_vendor/axe-core/axe.min.js`` into each chapter page, and
``_config.yml``'s ``exclude_patterns`` keeps it out of the book's ``_static/``. For each package
this script fetches the pinned release from the npm registry with ``npm pack``, checks the
tarball's sha256 and unpacks the files the book needs into ``_vendor/<package>/``. It does nothing
for a package whose version is already there. ``make book`` and ``make test`` run it; so does the
tests' book build.

Usage: ``python scripts/install_mathjax.py [--check]`` (``--check``: exit 1 if not installed).
"""
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
VENDOR = ROOT / "_vendor"


@dataclass(frozen=True)
class Package:
    """A pinned npm package and what of it goes into ``_vendor/<name>/``: ``stage(package,
    staged)`` copies from the unpacked tarball's ``package/`` folder into ``staged``, which must
    then hold ``entry``."""
    name: str
    version: str
    sha256: str
    entry: str
    stage: Callable[[Path, Path], None]

    @property
    def dest(self) -> Path:
        return VENDOR / self.name

    @property
    def stamp(self) -> Path:
        return self.dest / ".installed"

    @property
    def pin(self) -> str:
        return f"{self.name}@{self.version} {self.sha256}"


# MathJax: the browser build without the other combined components (each a full copy of MathJax)
# and the node-only parts. Kept: the entry point, the extensions it loads on demand (TeX packages
# such as boldsymbol, the menu, accessibility, speech), both output renderers the menu can switch
# to, and their fonts.
SKIP_TOP_LEVEL = {
    "tex-chtml.js", "tex-chtml-full.js", "tex-chtml-full-speech.js", "tex-svg.js",
    "tex-svg-full.js", "tex-mml-svg.js", "mml-chtml.js", "mml-svg.js", "node-main.js",
    "latest.js", "adaptors",
}


def _stage_mathjax(package: Path, staged: Path) -> None:
    for item in sorted((package / "es5").iterdir()):
        if item.name in SKIP_TOP_LEVEL:
            continue
        if item.is_dir():
            shutil.copytree(item, staged / item.name)
        else:
            shutil.copy2(item, staged / item.name)
    shutil.copy2(package / "LICENSE", staged / "LICENSE")
    assert any((staged / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))


def _stage_axe(package: Path, staged: Path) -> None:
    # The one-file browser build (rules and engine; English messages) and its licences.
    for name in ("axe.min.js", "LICENSE", "LICENSE-3RD-PARTY.txt"):
        shutil.copy2(package / name, staged / name)


MATHJAX = Package(
    name="mathjax", version="3.2.2",
    sha256="1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09",
    entry="tex-mml-chtml.js",  # the component Sphinx loads by default: TeX and MathML in, HTML out
    stage=_stage_mathjax,
)
AXE = Package(
    name="axe-core", version="4.14.1",
    sha256="e6b0ce02b84d892e2e33e403485e7f3d6c29e2be6df65daf44d89ba564139745",
    entry="axe.min.js",
    stage=_stage_axe,
)
PACKAGES = (MATHJAX, AXE)


def installed(pkg: Package = MATHJAX) -> bool:
    return pkg.stamp.is_file() and pkg.stamp.read_text().strip() == pkg.pin


def _npm_pack(workdir: Path, pkg: Package) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        sys.exit(
            f"install_mathjax: npm is needed to fetch {pkg.name} from the npm registry "
            "(Debian/Ubuntu: sudo apt-get install npm; .ci/run installs it when missing)."
        )
    cmd = [npm, "pack", f"{pkg.name}@{pkg.version}", "--silent", "--pack-destination", str(workdir)]
    r = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    tarballs = list(workdir.glob(f"{pkg.name}-{pkg.version}.tgz"))
    if r.returncode != 0 or len(tarballs) != 1:
        sys.exit(f"install_mathjax: `{' '.join(cmd)}` failed:\n{r.stdout}\n{r.stderr}")
    return tarballs[0]


def install(pkg: Package = MATHJAX) -> None:
    with tempfile.TemporaryDirectory(prefix=f"{pkg.name}-") as tmp:
        tmp = Path(tmp)
        tarball = _npm_pack(tmp, pkg)
        digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
        if digest != pkg.sha256:
            sys.exit(
                f"install_mathjax: {tarball.name} has sha256 {digest}, expected {pkg.sha256}; "
                "not installing it."
            )
        with tarfile.open(tarball) as tar:
            tar.extractall(tmp / "x", filter="data")
        staged = tmp / "staged"
        staged.mkdir()
        pkg.stage(tmp / "x" / "package", staged)
        assert (staged / pkg.entry).is_file(), f"{pkg.entry} missing from {tarball.name}"
        (staged / pkg.stamp.name).write_text(pkg.pin + "\n")
        if pkg.dest.exists():
            shutil.rmtree(pkg.dest)
        pkg.dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(staged), pkg.dest)
    where = pkg.dest.relative_to(ROOT)
    print(f"install_mathjax: {pkg.name}@{pkg.version} (sha256 {pkg.sha256[:12]}...) -> {where}/")


def main(argv: list[str]) -> int:
    if "--check" in argv:
        return 0 if all(installed(pkg) for pkg in PACKAGES) else 1
    for pkg in PACKAGES:
        if not installed(pkg):
            install(pkg)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
