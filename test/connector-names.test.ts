import { describe, expect, it } from 'vitest';
import { exposedToolName, ToolNameIndex, toolPrefix } from '../src/connectors/tool-names.js';

const VALID = /^[A-Za-z0-9_-]{1,64}$/;

describe('connector tool names: <connector name>__<tool name> within [A-Za-z0-9_-]{1,64}', () => {
  it.each([
    ['GitHub Tools', 'GitHub_Tools'],
    ['my-server', 'my-server'],
    ['  spaced  out  ', 'spaced_out'],
    ['Café — Ümlaut', 'Cafe_Umlaut'],
    ['a__b', 'a_b'],
    ['x.y/z', 'x_y_z'],
  ])('prefix of %j is %j', (name, prefix) => {
    expect(toolPrefix(name)).toBe(prefix);
  });

  it('a name with nothing usable, or a long one, still gets a distinct valid prefix of at most 32 characters', () => {
    expect(toolPrefix('日本語')).toMatch(/^connector_[0-9a-f]{8}$/);
    expect(toolPrefix('日本語')).not.toBe(toolPrefix('中文'));
    const a = toolPrefix(`${'long-connector-name-'.repeat(3)}alpha`);
    const b = toolPrefix(`${'long-connector-name-'.repeat(3)}beta`);
    expect(a).toHaveLength(32);
    expect(a).not.toBe(b);
  });

  it.each([
    ['github', 'create_issue', 'github__create_issue'],
    ['github', 'files/read.v2', 'github__files_read_v2'],
    ['everything', 'trigger-long-running-operation', 'everything__trigger-long-running-operation'],
  ])('%s + %s → %s', (prefix, tool, name) => {
    expect(exposedToolName(prefix, tool)).toBe(name);
  });

  it('every exposed name is valid, however long or odd the parts', () => {
    const prefixes = ['a', toolPrefix('x'.repeat(64)), toolPrefix('日本語')];
    const tools = ['t', 'y'.repeat(128), 'ünïcödé tool', '', '___', 'a.b.c/d e'];
    for (const prefix of prefixes) for (const tool of tools) expect(exposedToolName(prefix, tool)).toMatch(VALID);
  });

  it('the index maps both ways, and names that collide after sanitising stay distinct', () => {
    const index = new ToolNameIndex([
      { connectorId: 'c1', prefix: 'github', tools: ['create.issue', 'create_issue', 'search'] },
      { connectorId: 'c2', prefix: 'jira', tools: ['search', 'z'.repeat(100), `${'z'.repeat(99)}q`] },
    ]);
    expect(index.names).toHaveLength(6);
    expect(new Set(index.names).size).toBe(6);
    for (const name of index.names) {
      expect(name).toMatch(VALID);
      const ref = index.resolve(name)!;
      expect(index.nameOf(ref.connectorId, ref.tool)).toBe(name);
    }
    expect(index.resolve('github__search')).toEqual({ connectorId: 'c1', tool: 'search' });
    expect(index.resolve('jira__search')).toEqual({ connectorId: 'c2', tool: 'search' });
    expect(index.nameOf('c1', 'create.issue')).toBe('github__create_issue');
    expect(index.nameOf('c1', 'create_issue')).toMatch(/^github__create_issue_[0-9a-f]{8}$/);
    expect(index.resolve('calculator')).toBeUndefined();
    expect(index.resolve('github__nothing')).toBeUndefined();
  });
});
