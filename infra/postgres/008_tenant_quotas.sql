-- A tenant's monthly quota of accepted spans (calendar month, UTC), enforced by every gateway;
-- NULL: no quota. The gateways read the tenants that have one every 10 s.
ALTER TABLE tenants ADD COLUMN IF NOT EXISTS monthly_spans bigint CHECK (monthly_spans IS NULL OR monthly_spans >= 0);
