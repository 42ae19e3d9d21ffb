"""Install MathJax into _vendor/mathjax/ so that the book renders its math offline.

The book's pages load MathJax from their own ``_static/mathjax/`` (``mathjax_path`` and
``html_static_path`` in ``_config.yml``), never from a CDN. This script fetches the pinned
release from the npm registry with ``npm pack``, checks the tarball's sha256, and unpacks the
browser build (``es5/``) into the git-ignored ``_vendor/mathjax/``. It does nothing when that
version is already there. ``make book`` and ``make test`` run it; so does the tests' book build.

Usage: ``python scripts/install_mathjax.py [--check]`` (``--check``: exit 1 if not installed).
"""
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEST = ROOT / "_vendor" / "mathjax"
PACKAGE = "mathjax"
VERSION = "3.2.2"
SHA256 = "1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09"
ENTRY = "tex-mml-chtml.js"  # the component Sphinx loads by default: TeX and MathML in, HTML out
STAMP = DEST / ".installed"

# The browser build without the other combined components (each a full copy of MathJax) and the
# node-only parts. Kept: the entry point, the extensions it loads on demand (TeX packages such as
# boldsymbol, the menu, accessibility, speech), both output renderers the menu can switch to, and
# their fonts.
SKIP_TOP_LEVEL = {
    "tex-chtml.js", "tex-chtml-full.js", "tex-chtml-full-speech.js", "tex-svg.js",
    "tex-svg-full.js", "tex-mml-svg.js", "mml-chtml.js", "mml-svg.js", "node-main.js",
    "latest.js", "adaptors",
}


def installed() -> bool:
    return STAMP.is_file() and STAMP.read_text().strip() == f"{PACKAGE}@{VERSION} {SHA256}"


def _npm_pack(workdir: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        sys.exit(
            "install_mathjax: npm is needed to fetch MathJax from the npm registry "
            "(Debian/Ubuntu: sudo apt-get install npm; .ci/run installs it when missing)."
        )
    cmd = [npm, "pack", f"{PACKAGE}@{VERSION}", "--silent", "--pack-destination", str(workdir)]
    r = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    tarballs = list(workdir.glob(f"{PACKAGE}-{VERSION}.tgz"))
    if r.returncode != 0 or len(tarballs) != 1:
        sys.exit(f"install_mathjax: `{' '.join(cmd)}` failed:\n{r.stdout}\n{r.stderr}")
    return tarballs[0]


def install() -> None:
    with tempfile.TemporaryDirectory(prefix="mathjax-") as tmp:
        tmp = Path(tmp)
        tarball = _npm_pack(tmp)
        digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
        if digest != SHA256:
            sys.exit(
                f"install_mathjax: {tarball.name} has sha256 {digest}, expected {SHA256}; "
                "not installing it."
            )
        with tarfile.open(tarball) as tar:
            tar.extractall(tmp / "x", filter="data")
        package = tmp / "x" / "package"
        staged = tmp / "mathjax"
        staged.mkdir()
        for item in sorted((package / "es5").iterdir()):
            if item.name in SKIP_TOP_LEVEL:
                continue
            if item.is_dir():
                shutil.copytree(item, staged / item.name)
            else:
                shutil.copy2(item, staged / item.name)
        shutil.copy2(package / "LICENSE", staged / "LICENSE")
        assert (staged / ENTRY).is_file(), f"{ENTRY} missing from {tarball.name}"
        assert any((staged / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
        (staged / STAMP.name).write_text(f"{PACKAGE}@{VERSION} {SHA256}\n")
        if DEST.exists():
            shutil.rmtree(DEST)
        DEST.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(staged), DEST)
    where = DEST.relative_to(ROOT)
    print(f"install_mathjax: {PACKAGE}@{VERSION} (sha256 {SHA256[:12]}...) -> {where}/")


def main(argv: list[str]) -> int:
    if "--check" in argv:
        return 0 if installed() else 1
    if not installed():
        install()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
