export * from './price.model';
export { BUNDLED_PRICES, PRICE_TABLE_VERSION } from './prices.data';
export { modelKey, snapshotBase } from './model-key';
export { PriceTable, type Instant } from './price-table';
export { validatePriceOverrides, type ValidPriceOverride } from './price-override.validation';
export { costOf, priceSpan, type SpanCost, type SpanPricingInput } from './span-cost';
