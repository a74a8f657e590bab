export * from './api-key.secret';
export * from './api-key.verifier';
export * from './tenancy.model';
export * from './tenancy.repository';
export * from './tenancy.service';
export * from './authenticator';
export * from './data-policy.repository';
export * from './project-policies';
