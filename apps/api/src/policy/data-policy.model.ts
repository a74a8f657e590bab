import { Field, ID, InputType, Int, ObjectType, registerEnumType } from '@nestjs/graphql';

export enum CaptureModeEnum {
  FULL = 'FULL',
  HASH = 'HASH',
  DROP = 'DROP',
}
registerEnumType(CaptureModeEnum, {
  name: 'CaptureMode',
  description: 'What is kept of message contents.',
  valuesMap: {
    FULL: { description: 'The content, after redaction.' },
    HASH: { description: '`sha256:<hex>` of the content: equal contents can still be matched, none can be read.' },
    DROP: { description: 'Nothing.' },
  },
});

export enum DetectorEnum {
  EMAIL = 'EMAIL',
  PHONE = 'PHONE',
  CREDIT_CARD = 'CREDIT_CARD',
  IP_ADDRESS = 'IP_ADDRESS',
  API_KEY = 'API_KEY',
  JWT = 'JWT',
}
registerEnumType(DetectorEnum, {
  name: 'Detector',
  description: 'A built-in detector: each match is stored as `[REDACTED:<DETECTOR>]` (docs/data-policy.md lists what each matches).',
  valuesMap: {
    EMAIL: { description: 'E-mail addresses.' },
    PHONE: { description: 'Phone numbers in international and common national formats.' },
    CREDIT_CARD: { description: 'Card numbers of 13 to 19 digits that pass the Luhn check.' },
    IP_ADDRESS: { description: 'IPv4 and IPv6 addresses.' },
    API_KEY: { description: 'Secret keys of OpenAI, Anthropic, AWS, GitHub, Google, Stripe and Slack.' },
    JWT: { description: 'JSON Web Tokens.' },
  },
});

@ObjectType('CapturePolicy', {
  description: 'What is kept of message contents (inputs and outputs, whatever attribute or event carries them).',
})
export class CapturePolicyModel {
  @Field(() => CaptureModeEnum, { description: 'Prompts, tool arguments and other inputs.' }) inputs!: CaptureModeEnum;
  @Field(() => CaptureModeEnum, { description: 'Completions, tool results and other outputs.' }) outputs!: CaptureModeEnum;
  @Field(() => Int, { nullable: true, description: 'Longest content kept, in UTF-8 bytes (longer is cut, and marked); null: no cap.' })
  maxContentBytes!: number | null;
}

@ObjectType('RedactionPolicy', { description: 'What is replaced or left out before anything is stored.' })
export class RedactionPolicyModel {
  @Field(() => [DetectorEnum], { description: 'Built-in detectors applied to every text value.' }) detectors!: DetectorEnum[];
  @Field(() => [String], { description: 'RE2 regular expressions; each match is stored as `[REDACTED:PATTERN]`.' }) patterns!: string[];
  @Field(() => [String], { description: 'Attribute keys never stored (exact keys, or `prefix.*`), on spans, events, links and resources.' })
  dropAttributes!: string[];
}

@ObjectType('DataPolicy', {
  description:
    "A project's data policy, applied by the worker to every span and GenAI event before it is stored (within 30 s of a change).",
})
export class DataPolicyModel {
  @Field(() => ID, { description: 'The project.' }) projectId!: string;
  @Field(() => Int, {
    nullable: true,
    description:
      'Days data is kept after its start time (1–3650); null: kept until erased. Older data leaves every answer and is removed from storage.',
  })
  retentionDays!: number | null;
  @Field(() => CapturePolicyModel, { description: 'What is kept of message contents.' }) capture!: CapturePolicyModel;
  @Field(() => RedactionPolicyModel, { description: 'Detectors, patterns and attributes left out.' }) redaction!: RedactionPolicyModel;
  @Field(() => Date, { nullable: true, description: 'When the policy last changed; null: never set (the default: keep everything).' })
  updatedAt!: Date | null;
}

@InputType('CaptureInput', { description: 'Changes to what is kept of message contents; an absent field keeps its value, null resets it.' })
export class CaptureInput {
  @Field(() => CaptureModeEnum, { nullable: true, description: 'For inputs; default FULL.' }) inputs?: CaptureModeEnum | null;
  @Field(() => CaptureModeEnum, { nullable: true, description: 'For outputs; default FULL.' }) outputs?: CaptureModeEnum | null;
  @Field(() => Int, { nullable: true, description: 'Longest content kept, 256 B to 16 MiB; null: no cap.' })
  maxContentBytes?: number | null;
}

@InputType('RedactionInput', { description: 'Changes to redaction; an absent field keeps its value, null resets it (to none).' })
export class RedactionInput {
  @Field(() => [DetectorEnum], { nullable: true, description: 'The detectors to apply.' }) detectors?: DetectorEnum[] | null;
  @Field(() => [String], {
    nullable: true,
    description: 'RE2 regular expressions: at most 20, each at most 256 characters, none matching the empty string.',
  })
  patterns?: string[] | null;
  @Field(() => [String], { nullable: true, description: 'Attribute keys to leave out: at most 100; `prefix.*` for every key under it.' })
  dropAttributes?: string[] | null;
}

@InputType('SetDataPolicyInput', { description: 'A change to a project’s data policy: absent fields keep their value, null resets them.' })
export class SetDataPolicyInput {
  @Field(() => ID, { description: 'The project.' }) projectId!: string;
  @Field(() => Int, {
    nullable: true,
    description:
      'Days data is kept after its start time (1 to 3650); null: kept until erased. Answers forget older data within 30 s, storage drops it within a week, and spans that arrive older are rejected as expired.',
  })
  retentionDays?: number | null;
  @Field(() => CaptureInput, { nullable: true, description: 'What is kept of message contents.' }) capture?: CaptureInput | null;
  @Field(() => RedactionInput, { nullable: true, description: 'What is redacted or left out.' }) redaction?: RedactionInput | null;
}
