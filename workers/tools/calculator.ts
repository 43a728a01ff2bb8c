/**
 * A safe arithmetic evaluator (no eval): numbers, + - * / % ^, parentheses, unary minus.
 * Recursive descent over a token list; anything else is refused with a clear message.
 */
type Token = { kind: 'number'; value: number } | { kind: 'op'; value: string };

const MAX_LENGTH = 500;

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s*(?:(\d+(?:\.\d+)?(?:e[+-]?\d+)?|\.\d+)|([-+*/%^()]|\*\*|×|÷))/giy;
  let index = 0;
  while (index < expression.length) {
    if (/^\s*$/.test(expression.slice(index))) break;
    pattern.lastIndex = index;
    const match = pattern.exec(expression);
    if (!match) throw new Error(`unexpected character "${expression.slice(index).trim()[0]}"`);
    index = pattern.lastIndex;
    if (match[1] !== undefined) tokens.push({ kind: 'number', value: Number(match[1]) });
    else tokens.push({ kind: 'op', value: ({ '×': '*', '÷': '/', '**': '^' } as Record<string, string>)[match[2]!] ?? match[2]! });
  }
  return tokens;
}

class Parser {
  private position = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): number {
    if (this.tokens.length === 0) throw new Error('empty expression');
    const value = this.sum();
    if (this.position < this.tokens.length) throw new Error('unexpected input after the expression');
    return value;
  }

  private peek(): string | undefined {
    const token = this.tokens[this.position];
    return token?.kind === 'op' ? token.value : undefined;
  }

  private sum(): number {
    let value = this.product();
    for (let op = this.peek(); op === '+' || op === '-'; op = this.peek()) {
      this.position++;
      const right = this.product();
      value = op === '+' ? value + right : value - right;
    }
    return value;
  }

  private product(): number {
    let value = this.power();
    for (let op = this.peek(); op === '*' || op === '/' || op === '%'; op = this.peek()) {
      this.position++;
      const right = this.power();
      if ((op === '/' || op === '%') && right === 0) throw new Error('division by zero');
      value = op === '*' ? value * right : op === '/' ? value / right : value % right;
    }
    return value;
  }

  private power(): number {
    const base = this.unary();
    if (this.peek() !== '^') return base;
    this.position++;
    return base ** this.power();
  }

  private unary(): number {
    const op = this.peek();
    if (op === '-' || op === '+') {
      this.position++;
      const value = this.unary();
      return op === '-' ? -value : value;
    }
    return this.primary();
  }

  private primary(): number {
    const token = this.tokens[this.position++];
    if (!token) throw new Error('the expression ends too early');
    if (token.kind === 'number') return token.value;
    if (token.value === '(') {
      const value = this.sum();
      if (this.tokens[this.position++]?.value !== ')') throw new Error('missing closing parenthesis');
      return value;
    }
    throw new Error(`unexpected "${token.value}"`);
  }
}

export function evaluate(expression: string): number {
  if (expression.length > MAX_LENGTH) throw new Error(`expression longer than ${MAX_LENGTH} characters`);
  const value = new Parser(tokenize(expression)).parse();
  if (!Number.isFinite(value)) throw new Error('the result is not a finite number');
  return Number.parseFloat(value.toPrecision(12));
}

/** Finds the first arithmetic expression in free text ("What is 12*7?" → "12*7"). */
export function findExpression(text: string): string | undefined {
  const candidates = text.match(/[-(]*\d[\d.\s]*(?:(?:[-+*/%^×÷]|\*\*)[\s(]*-?\d[\d.\s]*\)*\s*)+/g) ?? [];
  for (const candidate of candidates) {
    const expression = candidate.trim();
    try {
      evaluate(expression);
      return expression;
    } catch {
      // not a well-formed expression; keep looking
    }
  }
  return undefined;
}
