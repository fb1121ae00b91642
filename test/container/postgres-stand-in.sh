#!/bin/sh
# Plays the official postgres image's part in the compose files for the container test, with
# Debian's PostgreSQL (no registry is reachable here): on an empty data directory it creates the
# cluster with POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB, then runs the server in the
# foreground, listening on the container's network with password authentication.
set -eu
PGDATA=/var/lib/postgresql/data
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

mkdir -p "$PGDATA" /run/postgresql
chown postgres:postgres "$PGDATA" /run/postgresql
chmod 0700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  chown postgres "$pwfile"
  as_postgres "$bin/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8
  rm -f "$pwfile"
  echo 'host all all all scram-sha-256' >> "$PGDATA/pg_hba.conf"
  echo "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\";" | as_postgres "$bin/postgres" --single -D "$PGDATA" postgres >/dev/null
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups "$bin/postgres" -D "$PGDATA" -c listen_addresses='*'
