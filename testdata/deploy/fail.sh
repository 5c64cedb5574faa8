#!/bin/sh
# A deploy script for tests that fails after printing why.
echo "installing the agent"
echo "E: package brine-agent has no installation candidate" >&2
exit 3
