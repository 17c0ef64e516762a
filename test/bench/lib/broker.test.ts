/** The benchmark harness's `--broker=` option: which brokers run, in which order. */
import { describe, expect, it } from 'vitest';
import { parseBrokerOption } from '../../../bench/lib/broker.js';

describe('parseBrokerOption', () => {
  it('gives the default without the option', () => {
    expect(parseBrokerOption(['--smoke'], ['kafka', 'mock'])).toEqual(['kafka', 'mock']);
  });

  it('runs the brokers named, in the order given, each once', () => {
    expect(parseBrokerOption(['--broker=mock'], ['kafka', 'mock'])).toEqual(['mock']);
    expect(parseBrokerOption(['--broker=mock,kafka'], ['kafka', 'mock'])).toEqual(['mock', 'kafka']);
    expect(parseBrokerOption(['--broker=kafka, kafka'], ['mock'])).toEqual(['kafka']);
  });

  it('refuses an unknown broker or an empty list, naming the choices', () => {
    expect(() => parseBrokerOption(['--broker=redpanda'], ['mock'])).toThrow('--broker wants a comma-separated list of kafka, mock; got "redpanda"');
    expect(() => parseBrokerOption(['--broker='], ['mock'])).toThrow(/--broker wants/);
  });
});
