#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image:
# it installs the kit from this zip's kit/ folder into $ROOT/venv, with the
# dependency versions of constraints.txt (those the bundle was built with).
#
# AUTOGRADER_ROOT (default /autograder) lets the kit's tests run it in a
# temporary folder laid out like /autograder.
set -euo pipefail

ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
VENV="$ROOT/venv"

# A Python of 3.11 or later: the image's own if it has one, else Ubuntu's python3.11.
find_python() {
    for candidate in python3.13 python3.12 python3.11 python3; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
            command -v "$candidate"
            return 0
        fi
    done
    return 1
}

install_packages() {
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
}

if ! python=$(find_python); then
    install_packages python3.11 python3.11-venv
    python=$(find_python)
fi
if ! "$python" -m venv "$VENV"; then
    # Ubuntu splits venv (and its pip) into a package of its own.
    version=$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    install_packages "python$version-venv"
    "$python" -m venv "$VENV"
fi

"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    --constraint "$SOURCE/constraints.txt" "$SOURCE/kit"

# The staff's material (the model answer, each mutant's killing test) goes into the
# installed kit readable by root alone, and the zip's own copy becomes root's alone: a
# student's code runs as another user and can read neither (docs/deploy.md).
KIT=$("$VENV/bin/python" -P -c 'from grader.inputs.catalog import kit_root; print(kit_root())')
if [[ -d "$SOURCE/staff" ]]; then
    while IFS= read -r -d '' file; do
        install -D -m 0600 "$SOURCE/staff/$file" "$KIT/$file"
    done < <(cd "$SOURCE/staff" && find . -type f -print0)
fi
chmod -R go= "$SOURCE"
"$VENV/bin/grader" --version
# Where the container gives no namespaces (level uid) only permissions keep a run from the
# kit: the staff checkout and the grader's install (the kit is inside it) admit root alone,
# while Python and the packages a test imports stay readable (docs/security.md).
package=$("$VENV/bin/python" -P -c 'import grader, os; print(os.path.dirname(grader.__file__))')
case "$package" in
    "$VENV"/*) chmod -R go-rwx "$SOURCE" "$package" ;;
    *) echo "setup.sh: the grader was not installed in $VENV (found $package)" >&2; exit 1 ;;
esac
