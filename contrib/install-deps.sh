#!/bin/sh
# Install the Debian packages quorum needs that are not installed yet.
# Usage: install-deps.sh PKG...
missing=
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "deps: all packages present"
	exit 0
fi
echo "deps: installing:$missing"
if [ "$(id -u)" -eq 0 ]; then
	SUDO=
elif command -v sudo >/dev/null 2>&1; then
	SUDO=sudo
else
	echo "deps: not root and no sudo; run as root: apt-get install$missing" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps: no apt-get here; install these packages by hand:$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# Update the package lists only when they have never been fetched.
if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e lock -e partial)" ]; then
	$SUDO apt-get update -qq || exit 1
fi
if ! $SUDO apt-get install -y -qq --no-install-recommends $missing; then
	$SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends $missing ||
		{ echo "deps: apt-get failed; install by hand:$missing" >&2; exit 1; }
fi
