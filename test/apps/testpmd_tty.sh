#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# rpcr-testpmd at a real terminal (tmux): the prompt comes up, TAB completes a command and its
# argument, a command runs, 'quit' leaves.
#
# usage: testpmd_tty.sh RPCR_TESTPMD
set -u
exe=$1
sock=rpcr-tty-$$
sess=tp
if ! command -v tmux >/dev/null; then
	echo "tmux is not installed (usertools/rpcr-setup.sh installs it)"
	exit 1
fi
tm() { tmux -L "$sock" "$@"; }
cleanup() { tm kill-server 2>/dev/null; }
trap cleanup EXIT

pane() { tm capture-pane -p -t "$sess" 2>/dev/null; }
wait_for() { # text, seconds
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		pane | grep -qF -- "$1" && return 0
		sleep 0.1
	done
	echo "FAIL: '$1' did not appear; the terminal shows:"
	pane
	exit 1
}

tm new-session -d -s "$sess" -x 160 -y 50 "$exe; echo rpcr-testpmd-exited-\$?; sleep 30"
wait_for "rpcr-testpmd>" 30
# "sho" + TAB completes to "show "; "conf" + TAB to "config"; Enter runs it.
tm send-keys -t "$sess" "sho" Tab
wait_for "rpcr-testpmd> show" 5
tm send-keys -t "$sess" "conf" Tab
wait_for "rpcr-testpmd> show config" 5
tm send-keys -t "$sess" Enter
wait_for "mode null, size 0, outstanding 8" 5
# '?' lists what can follow ("set mode" then its choices).
tm send-keys -t "$sess" "set mode " "?"
wait_for "mixed" 5
tm send-keys -t "$sess" C-a C-k
tm send-keys -t "$sess" "help" Enter
wait_for "port start <devargs>" 5
tm send-keys -t "$sess" "quit" Enter
wait_for "rpcr-testpmd-exited-0" 15
echo "rpcr-testpmd at a terminal: prompt, completion, help and quit work"
