/*
 * Governance (issue 30): tool policies per tenant and project, spend budgets per tenant, project,
 * user and conversation (per day and per month), and the reservations a model call takes against
 * them before it runs (released at its end, or when they expire: a killed worker leaves none
 * behind for long). Spent money is the usage ledger's; the budget tables hold caps and the money
 * calls in flight may still spend.
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE TABLE tool_policies (
      tenant_id        text NOT NULL,
      -- '*': every project of the tenant
      project_id       text NOT NULL,
      allow            text[] NOT NULL DEFAULT '{}',
      deny             text[] NOT NULL DEFAULT '{}',
      require_approval text[] NOT NULL DEFAULT '{}',
      updated_at       timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, project_id)
    );

    CREATE TABLE spend_budgets (
      tenant_id  text NOT NULL,
      scope      text NOT NULL CHECK (scope IN ('tenant', 'project', 'user', 'conversation')),
      -- '' for the tenant itself; a project, user or conversation id otherwise
      scope_id   text NOT NULL,
      period     text NOT NULL CHECK (period IN ('day', 'month')),
      cap_usd    double precision NOT NULL CHECK (cap_usd >= 0),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, scope, scope_id, period)
    );

    CREATE TABLE spend_reservations (
      conversation_id text NOT NULL,
      call_key        text NOT NULL,
      turn_id         text NOT NULL,
      tenant_id       text NOT NULL,
      project_id      text NOT NULL,
      user_id         text,
      amount_usd      double precision NOT NULL,
      created_at      timestamptz NOT NULL DEFAULT now(),
      expires_at      timestamptz NOT NULL,
      PRIMARY KEY (conversation_id, call_key)
    );
    CREATE INDEX spend_reservations_by_tenant ON spend_reservations (tenant_id, expires_at);

    CREATE INDEX usage_ledger_by_time ON usage_ledger (created_at);

  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    DROP TABLE spend_reservations, spend_budgets, tool_policies;
    DROP INDEX usage_ledger_by_time;
  `);
}
