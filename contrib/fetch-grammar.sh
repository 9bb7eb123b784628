#!/bin/sh
# Fetch a tree-sitter grammar from the npm registry for the build, into a
# directory git ignores: `make deps` runs it.
# Usage: fetch-grammar.sh NAME VERSION SHA512 DIR
# Leaves DIR/NAME-VERSION/ (the package unpacked) once the tarball matches
# the pinned sha512. Offline, put NAME-VERSION.tgz (from `npm pack
# NAME@VERSION` elsewhere) in DIR by hand: it is checked and used as is.
set -u
[ $# -eq 4 ] || { echo "usage: fetch-grammar.sh NAME VERSION SHA512 DIR" >&2; exit 2; }
name=$1 version=$2 want=$3 dir=$4
pkg=$name-$version
tgz=$dir/$pkg.tgz
top=$(cd "$(dirname "$0")/.." && pwd)

if [ -f "$dir/$pkg/src/parser.c" ] && [ -f "$dir/$pkg/.sha512" ] &&
	[ "$(cat "$dir/$pkg/.sha512")" = "$want" ]; then
	echo "deps: $pkg present"
	exit 0
fi
mkdir -p "$dir" || exit 1
if [ ! -f "$tgz" ]; then
	# Debian 12's base has no npm; where node came from elsewhere (it
	# brings its own npm), Debian's npm would conflict with it.
	if ! command -v npm >/dev/null 2>&1; then
		sh "$top/contrib/install-deps.sh" npm || exit 1
	fi
	echo "deps: fetching $name@$version (npm pack)"
	tmp=$(mktemp -d "$dir/.fetch.XXXXXX") || exit 1
	if ! (cd "$tmp" && npm pack --silent --ignore-scripts --fetch-retries=1 \
		"$name@$version" >/dev/null) || [ ! -f "$tmp/$pkg.tgz" ]; then
		rm -rf "$tmp"
		echo "deps: npm could not fetch $name@$version from its registry;" \
			"put $pkg.tgz (sha512 $want) in $dir/ by hand and rerun make deps" >&2
		exit 1
	fi
	mv "$tmp/$pkg.tgz" "$tgz" && rm -rf "$tmp" || exit 1
fi
got=$(sha512sum "$tgz" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
	rm -f "$tgz"
	echo "deps: $pkg.tgz has sha512 $got, not the pinned $want: removed it" >&2
	exit 1
fi
tmp=$(mktemp -d "$dir/.unpack.XXXXXX") || exit 1
if ! tar -xzf "$tgz" -C "$tmp" --no-same-owner ||
	[ ! -f "$tmp/package/src/parser.c" ]; then
	rm -rf "$tmp"
	echo "deps: $pkg.tgz does not hold src/parser.c" >&2
	exit 1
fi
echo "$want" >"$tmp/package/.sha512"
rm -rf "${dir:?}/$pkg"
mv "$tmp/package" "$dir/$pkg" && rm -rf "$tmp" || exit 1
echo "deps: $pkg unpacked in $dir/$pkg"
