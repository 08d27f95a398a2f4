import { ErrorCode } from '../../protocol/error-codes.js';
import type { QueueConfig } from '../core/index.js';
import { currentValue } from './describe.js';
import { checkTogether, keyNamed, normalizedValue, refuseDuplicates, settingsFor, type TopicConfigKey } from './keys.js';
import { ConfigOperation, invalid, LIST, parseList, TopicConfigError } from './values.js';

/**
 * Changing a topic's configs: at creation (CreateTopics, the bridge),
 * replacing the whole set (AlterConfigs) or key by key
 * (IncrementalAlterConfigs). Each returns the queue settings the new set
 * makes, after the checks Kafka makes.
 */

/** The settings for a new set of Kafka configs, after the checks Kafka makes across keys. */
function checkedSettingsFor(set: Record<string, string>): Partial<QueueConfig> {
  checkTogether(set);
  return settingsFor(set);
}

/** A null value in CreateTopics: Kafka refuses it as a bad config. */
const nullAtCreation = (name: string) => invalid(`Null value not supported for topic configs: ${name}. Give a value, or leave the config out for its default.`);

/** A null value in AlterConfigs or an IncrementalAlterConfigs SET: Kafka refuses it as a bad request. */
const nullInAlter = (name: string) =>
  new TopicConfigError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${name}. Give a value, or delete the config to return it to its default.`);

/** One key's value as given, checked: the normalized value, or a TopicConfigError. */
function checkedValue(name: string, value: string | null, nullValue: (name: string) => TopicConfigError): string {
  const key = keyNamed(name);
  if (value === null) throw nullValue(name);
  return normalizedValue(key, value);
}

/** The set a list of entries makes; a key given twice keeps its last value. */
function setOf(entries: readonly { name: string; value: string | null }[], nullValue: (name: string) => TopicConfigError): Record<string, string> {
  const set: Record<string, string> = {};
  for (const { name, value } of entries) set[name] = checkedValue(name, value, nullValue);
  return set;
}

/**
 * Configs given at creation (CreateTopics): a key given twice takes its last
 * value, as in Kafka. Throws TopicConfigError.
 */
export function topicConfigFromEntries(entries: readonly { name: string; value: string | null }[]): Partial<QueueConfig> {
  return checkedSettingsFor(setOf(entries, nullAtCreation));
}

/**
 * AlterConfigs: the given configs replace the topic's whole set, so every
 * key not listed returns to its default, as in Kafka; a key given twice is
 * refused, as Kafka does here.
 */
export function replacedTopicConfig(entries: readonly { name: string; value: string | null }[]): Partial<QueueConfig> {
  refuseDuplicates(entries.map((e) => e.name));
  return checkedSettingsFor(setOf(entries, nullInAlter));
}

export interface ConfigChange {
  name: string;
  configOperation: number;
  value: string | null;
}

/** APPEND and SUBTRACT on a list key, starting from its current value (its default when unset), as Kafka does. */
function changedList(key: TopicConfigKey, current: QueueConfig, change: ConfigChange): string {
  if (key.type !== LIST) {
    const verb = change.configOperation === ConfigOperation.APPEND ? 'APPEND' : 'SUBTRACT';
    throw invalid(`Can't ${verb} to key ${key.name} because its type is not LIST.`);
  }
  const now = parseList(currentValue(key, current).value);
  const given = parseList(change.value ?? '');
  const next = change.configOperation === ConfigOperation.APPEND ? [...now, ...given.filter((v) => !now.includes(v))] : now.filter((v) => !given.includes(v));
  return next.join(',');
}

/**
 * IncrementalAlterConfigs: SET a value, DELETE back to the default (a name
 * that is no config deletes nothing, as in Kafka), APPEND to or SUBTRACT
 * from a list key.
 */
export function incrementalTopicConfig(current: QueueConfig, changes: readonly ConfigChange[]): Partial<QueueConfig> {
  refuseDuplicates(changes.map((c) => c.name));
  const set: Record<string, string> = { ...current.topicConfigs };
  for (const change of changes) {
    switch (change.configOperation) {
      case ConfigOperation.SET:
        set[change.name] = checkedValue(change.name, change.value, nullInAlter);
        break;
      case ConfigOperation.DELETE:
        delete set[change.name];
        break;
      case ConfigOperation.APPEND:
      case ConfigOperation.SUBTRACT: {
        const key = keyNamed(change.name);
        set[change.name] = normalizedValue(key, changedList(key, current, change));
        break;
      }
      default:
        throw new TopicConfigError(ErrorCode.INVALID_REQUEST, `Unknown config operation ${change.configOperation} for ${change.name}; use 0 (SET), 1 (DELETE), 2 (APPEND) or 3 (SUBTRACT).`);
    }
  }
  return checkedSettingsFor(set);
}

/** The Kafka code and message for an error from this module; anything else is rethrown. */
export function topicConfigErrorOf(e: unknown): { errorCode: number; errorMessage: string } {
  if (e instanceof TopicConfigError) return { errorCode: e.errorCode, errorMessage: e.message };
  throw e;
}
