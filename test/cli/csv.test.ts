/**
 * The streaming CSV reader and the writer: RFC 4180 quoting, every line-break style, records
 * split across chunks anywhere, and a round trip of arbitrary text.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { CsvError, csvField, csvRecord, detectDelimiter, parseCsv, type Delimiter } from '../../src/cli/csv.ts';

async function parse(text: string | string[], delimiter?: Delimiter): Promise<{ fields: string[]; line: number }[]> {
  const records = [];
  for await (const record of parseCsv(typeof text === 'string' ? [text] : text, delimiter)) records.push(record);
  return records;
}

async function fields(text: string | string[], delimiter?: Delimiter): Promise<string[][]> {
  return (await parse(text, delimiter)).map((record) => record.fields);
}

describe('CSV reader', () => {
  test('reads plain records, with or without a final line break', async () => {
    assert.deepEqual(await fields('a,b,c\n1,2,3\n'), [['a', 'b', 'c'], ['1', '2', '3']]);
    assert.deepEqual(await fields('a,b,c\n1,2,3'), [['a', 'b', 'c'], ['1', '2', '3']]);
    assert.deepEqual(await fields('a,,c\n,,\n'), [['a', '', 'c'], ['', '', '']]);
  });

  test('a record past the bound comes out oversized and empty, and the records around it whole', async () => {
    const records = [];
    const text = `a,b\n1,${'x'.repeat(50)}\n2,"${'y\n'.repeat(30)}"\n3,z\n`;
    for await (const record of parseCsv([text.slice(0, 40), text.slice(40)], ',', 20)) records.push(record);
    assert.deepEqual(records, [
      { fields: ['a', 'b'], line: 1 },
      { fields: [], line: 2, oversized: true },
      { fields: [], line: 3, oversized: true },
      { fields: ['3', 'z'], line: 34 },
    ]);
  });

  test('reads quoted fields holding commas, doubled quotes and line breaks', async () => {
    const text = 'code,url,title\n' +
      'q1,"https://example.com/?a=1,2","say ""hi"""\n' +
      'q2,https://example.com,"line one\nline two\r\nline three"\n' +
      'q3,"",""""\n';
    assert.deepEqual(await fields(text), [
      ['code', 'url', 'title'],
      ['q1', 'https://example.com/?a=1,2', 'say "hi"'],
      ['q2', 'https://example.com', 'line one\nline two\r\nline three'],
      ['q3', '', '"'],
    ]);
  });

  test('numbers records by the line they start on, counting breaks inside quotes', async () => {
    const records = await parse('h\r\n"a\r\nb"\r\nc\r\n\r\n"d\ne\nf"\rg\n');
    assert.deepEqual(records.map((r) => [r.line, r.fields[0]]), [
      [1, 'h'], [2, 'a\r\nb'], [4, 'c'], [6, 'd\ne\nf'], [9, 'g'],
    ]);
  });

  test('skips a byte-order mark and blank lines', async () => {
    assert.deepEqual(await fields('\ufeffa,b\n\n1,2\n\n'), [['a', 'b'], ['1', '2']]);
  });

  test('gives the same records however the text is split into chunks', async () => {
    const text = 'a,"b ""x"", y"\r\n"multi\r\nline",c\r\nlast,"q"\r\n';
    const whole = await fields(text);
    for (let size = 1; size <= 4; size++) {
      const chunks = [];
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
      assert.deepEqual(await fields(chunks), whole, `chunks of ${size}`);
    }
  });

  test('keeps a quote inside an unquoted field as it is', async () => {
    assert.deepEqual(await fields('ab"c,d\n'), [['ab"c', 'd']]);
  });

  test('refuses text after a closing quote and a quote never closed, naming the line', async () => {
    await assert.rejects(() => parse('a\n"b"x,c\n'), (error: unknown) => error instanceof CsvError && error.line === 2);
    await assert.rejects(() => parse('a\nb\n"c,d\ne\n'), /line 3: a quoted field is never closed/);
  });
});

describe('CSV delimiters', () => {
  test('reads semicolon- and tab-separated text, quotes and all, leaving commas in fields', async () => {
    assert.deepEqual(await fields('keyword;url;title\n1;https://example.com/?a=1,2;"a; b ""c"""\n', ';'), [
      ['keyword', 'url', 'title'],
      ['1', 'https://example.com/?a=1,2', 'a; b "c"'],
    ]);
    assert.deepEqual(await fields('shortCode\tlongUrl\r\nabc\t"https://example.com/\tx"\r\n', '\t'), [
      ['shortCode', 'longUrl'],
      ['abc', 'https://example.com/\tx'],
    ]);
    await assert.rejects(() => parse('a;b\n"c"x;d\n', ';'), /line 2: unexpected "x" after the closing quote/);
  });

  test('the header line decides: the separator it holds most of outside quotes, else a comma', () => {
    const cases: [string, Delimiter][] = [
      ['keyword,url,title,timestamp,ip,clicks', ','],
      ['keyword;url;title;timestamp;ip;clicks', ';'],
      ['shortCode\tlongUrl\ttitle\tvisits', '\t'],
      ['"a,b";"c,d";e', ';'],
      ['"Short; URL",Long URL,Clicks', ','],
      ['url', ','],
      ['', ','],
      ['a;b,c', ','],
    ];
    for (const [header, expected] of cases) assert.equal(detectDelimiter(header), expected, JSON.stringify(header));
  });
});

describe('CSV writer', () => {
  test('quotes only the fields that need it', () => {
    assert.equal(csvField('plain'), 'plain');
    assert.equal(csvField(42), '42');
    assert.equal(csvField('a,b'), '"a,b"');
    assert.equal(csvField('say "hi"'), '"say ""hi"""');
    assert.equal(csvField('two\nlines'), '"two\nlines"');
    assert.equal(csvField(' padded'), '" padded"');
    assert.equal(csvRecord(['a', 'b,c', 3]), 'a,"b,c",3\n');
  });

  test('whatever is written reads back the same', async () => {
    // A record that is one empty field is a blank line, which readers skip: give each two fields.
    const record = fc.array(fc.string({ unit: 'grapheme' }), { minLength: 2, maxLength: 5 });
    await fc.assert(
      fc.asyncProperty(fc.array(record, { maxLength: 8 }), async (records) => {
        const text = records.map(csvRecord).join('');
        assert.deepEqual(await fields(text), records);
      }),
      { numRuns: 300 },
    );
  });
});
