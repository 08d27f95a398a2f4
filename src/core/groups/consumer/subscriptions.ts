import type { TopicMetadata } from './types.js';

/**
 * Subscriptions: topic names, or a regular expression matched against every
 * topic's whole name (Kafka matches with RE2/J: `matches()`, not `find()`).
 *
 * The expression is run by JavaScript's RegExp. RE2/J's syntax is taken as it
 * is where the two agree (classes, alternation, repetition, anchors, `\d`
 * and the like); its leading `(?i)` becomes the ignore-case flag. What RE2/J
 * refuses (look-ahead, look-behind, back-references) is refused here too, so
 * a subscription that works here works on Kafka.
 */

const RE2_REFUSES = /\(\?[=!]|\(\?<[=!]|\\[1-9]|\\k</;

/** The compiled expression, or a sentence saying why it is not one. */
export function compileSubscription(regex: string): RegExp | string {
  let source = regex;
  let flags = '';
  if (source.startsWith('(?i)')) {
    source = source.slice(4);
    flags = 'i';
  }
  if (RE2_REFUSES.test(source)) {
    return `SubscribedTopicRegex ${JSON.stringify(regex)} uses look-around or a back-reference, which RE2/J (Kafka's syntax) does not support.`;
  }
  try {
    return new RegExp(`^(?:${source})$`, flags);
  } catch (e) {
    return `SubscribedTopicRegex ${JSON.stringify(regex)} is not a valid regular expression: ${(e as Error).message}.`;
  }
}

/** The existing topics a member's subscription names or matches. */
export function subscribedTopics(names: readonly string[], regex: string | null, topics: readonly TopicMetadata[]): TopicMetadata[] {
  const byName = new Set(names);
  const pattern = regex === null ? null : compileSubscription(regex);
  const matcher = pattern instanceof RegExp ? pattern : null;
  return topics.filter((t) => byName.has(t.name) || (matcher !== null && matcher.test(t.name)));
}
