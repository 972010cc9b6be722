#!/usr/bin/env bash
# A real Postfix on loopback for the "kinder to mail servers" run (docs/smtp.md, bench/postfix.ts,
# test/e2e/postfix.test.ts): Debian's postfix package, one smtpd on 127.0.0.1:PORT with Postfix's DEFAULT error
# limits (smtpd_soft_error_limit 10, smtpd_hard_error_limit 20, smtpd_error_sleep_time 1s), the domains of
# fixtures/postfix/addresses.csv as its local domains, the addresses marked `yes` there as its only recipients
# (others get `550 5.1.1 ... User unknown in local recipient table`), one refused sender domain
# (refused-sender.mailvet.test: `554 5.7.1 ... Sender address rejected` at MAIL FROM, restrictions not delayed to
# RCPT), and a log file of its own.
#
#   scripts/postfix-loopback.sh start     install postfix with apt-get if missing, write the config, start it
#   scripts/postfix-loopback.sh stop      stop it (the directory stays, with its maillog)
#   scripts/postfix-loopback.sh status    say whether it runs, and where
#
# Environment: MAILVET_POSTFIX_DIR (default /var/lib/mailvet-postfix: config, queue, maillog),
# MAILVET_POSTFIX_PORT (default 2525). Needs root (Postfix's master runs as root and drops to `postfix`).
#
# It never relays nor delivers: it listens on 127.0.0.1 only, the master runs no queue manager, pickup, SMTP
# client or delivery agent (a message could not leave the queue), the default and relay transports are
# `error:` (the local one cannot be: smtpd would refuse every local recipient with its text), relaying is refused to everyone
# (smtpd_relay_restrictions = reject_unauth_destination), DATA is always refused, and smtpd looks up no names
# (smtpd_peername_lookup = no). The package's own instance (/etc/postfix, port 25) is left unconfigured and
# stopped: Debian's "No configuration" answer is preseeded for a fresh install.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${MAILVET_POSTFIX_DIR:-/var/lib/mailvet-postfix}"
PORT="${MAILVET_POSTFIX_PORT:-2525}"
ADDRESSES="$ROOT/fixtures/postfix/addresses.csv"

die() {
  echo "postfix-loopback: $*" >&2
  exit 1
}

[ "$(id -u)" = "0" ] || die "run as root (Postfix's master process needs it)"
case "$PORT" in '' | *[!0-9]*) die "MAILVET_POSTFIX_PORT must be a port number" ;; esac
case "$DIR" in /*) ;; *) die "MAILVET_POSTFIX_DIR must be an absolute path" ;; esac

install_postfix() {
  command -v postfix >/dev/null 2>&1 && return
  echo "postfix-loopback: installing Debian's postfix package"
  echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postfix >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postfix >/dev/null; } ||
    die "apt-get install postfix failed"
}

running() {
  [ -f "$DIR/etc/main.cf" ] && postfix -c "$DIR/etc" status >/dev/null 2>&1
}

write_config() {
  mkdir -p "$DIR/etc" "$DIR/queue" "$DIR/data"
  chown postfix "$DIR/data"
  local domains
  domains="$(tail -n +2 "$ADDRESSES" | cut -d, -f1 | sed 's/.*@//' | sort -u | paste -sd, -)"
  # The local recipient table: one `address OK` line per mailbox that exists (texthash: no postmap needed).
  awk -F, 'NR > 1 && $2 == "yes" { print $1 " OK" }' "$ADDRESSES" >"$DIR/etc/recipients"
  echo "refused-sender.mailvet.test REJECT mailvet loopback Postfix refuses this sender" >"$DIR/etc/senders"
  cat >"$DIR/etc/main.cf" <<EOF
# Written by scripts/postfix-loopback.sh; every smtpd error limit is left at Postfix's default.
compatibility_level = 3.6
myhostname = mx.mailvet-postfix.test
mydomain = mailvet-postfix.test
myorigin = \$myhostname
mydestination = $domains
local_recipient_maps = texthash:$DIR/etc/recipients
smtpd_reject_unlisted_recipient = yes
alias_maps =
alias_database =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.1/32
smtpd_relay_restrictions = reject_unauth_destination
smtpd_data_restrictions = reject
# One sender domain is refused at MAIL FROM itself (Postfix delays it to RCPT unless told not to); every other
# sender passes.
smtpd_delay_reject = no
smtpd_sender_restrictions = check_sender_access texthash:$DIR/etc/senders
smtpd_peername_lookup = no
smtpd_banner = \$myhostname ESMTP Postfix
default_transport = error:mailvet loopback Postfix delivers nothing
relay_transport = error:mailvet loopback Postfix delivers nothing
queue_directory = $DIR/queue
data_directory = $DIR/data
maillog_file = $DIR/maillog
maillog_file_prefixes = $DIR
syslog_name = mailvet-postfix
biff = no
# cleanup waits up to in_flow_delay for a token from the queue manager before it opens a queue file (on the first
# accepted RCPT of a session); with no queue manager running, no token ever comes: do not wait.
in_flow_delay = 0
EOF
  # Only what answers RCPT: smtpd on loopback, cleanup and trivial-rewrite (which smtpd asks), anvil, the
  # log daemon. No qmgr, pickup, smtp or local: nothing is ever delivered or relayed.
  cat >"$DIR/etc/master.cf" <<EOF
# Written by scripts/postfix-loopback.sh.
127.0.0.1:$PORT inet n - n - - smtpd
cleanup   unix  n - n - 0 cleanup
rewrite   unix  - - n - - trivial-rewrite
anvil     unix  - - n - 1 anvil
proxymap  unix  - - n - - proxymap
postlog   unix-dgram n - n - 1 postlogd
EOF
  postfix -c "$DIR/etc" check >/dev/null 2>&1 || postfix -c "$DIR/etc" set-permissions >/dev/null 2>&1 || true
}

wait_listening() {
  for _ in $(seq 1 50); do
    if timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT" 2>/dev/null; then return 0; fi
    sleep 0.2
  done
  die "Postfix does not answer on 127.0.0.1:$PORT; see $DIR/maillog"
}

case "${1:-}" in
  start)
    install_postfix
    if running; then
      postfix -c "$DIR/etc" stop >/dev/null 2>&1 || true
    fi
    write_config
    postfix -c "$DIR/etc" start
    wait_listening
    echo "postfix-loopback: Postfix $(postconf -c "$DIR/etc" -h mail_version) on 127.0.0.1:$PORT, log $DIR/maillog"
    postconf -c "$DIR/etc" -x smtpd_soft_error_limit smtpd_hard_error_limit smtpd_error_sleep_time
    ;;
  stop)
    if running; then
      postfix -c "$DIR/etc" stop
      echo "postfix-loopback: stopped (log kept in $DIR/maillog)"
    else
      echo "postfix-loopback: not running"
    fi
    ;;
  status)
    if running; then
      echo "postfix-loopback: running on 127.0.0.1:$PORT, log $DIR/maillog"
    else
      echo "postfix-loopback: not running"
      exit 3
    fi
    ;;
  *)
    die "usage: $0 start|stop|status"
    ;;
esac
