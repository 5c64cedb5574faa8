#!/bin/sh
# A deploy script for tests that fails after printing why (and, carelessly,
# a credential it was given).
echo "installing the agent with token $API_TOKEN"
echo "E: package brine-agent has no installation candidate" >&2
exit 3
