#!/usr/bin/env bash
set -eu
SRC="${1:-data}"
echo "backing up $SRC"
echo "archive: ${SRC}.tar"
