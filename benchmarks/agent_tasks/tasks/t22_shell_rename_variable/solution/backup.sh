#!/usr/bin/env bash
set -eu
SOURCE_DIR="${1:-data}"
echo "backing up $SOURCE_DIR"
echo "archive: ${SOURCE_DIR}.tar"
