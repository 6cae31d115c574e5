#!/bin/sh
# Install the Debian packages protune needs to build, test and benchmark.
# Idempotent and non-interactive; run as root or with sudo available.
set -eu

PACKAGES="
build-essential
pkg-config
cmake
ninja-build
git
libhalide14-0-dev
llvm-14-dev
liblmdb-dev
lmdb-utils
libgit2-dev
libxxhash-dev
libpng-dev
libjpeg-dev
clang
libclang-rt-14-dev
gnuplot-nox
"

missing=
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	echo "install-deps: all packages already installed"
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi
echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
