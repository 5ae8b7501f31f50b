// Retry-delay expressions (`Upstash-Retry-Delay`): arithmetic over the variable `retried` and the
// functions pow, exp, sqrt, abs, floor, ceil, round, min, max, evaluated by a small recursive
// descent parser (never eval). The result is a delay in milliseconds.

export class RetryDelayExpressionError extends Error {
  readonly code = 'ERR_EMULATOR_RETRY_DELAY';
}

type Node =
  | { kind: 'number'; value: number }
  | { kind: 'retried' }
  | { kind: 'negate'; operand: Node }
  | { kind: 'binary'; op: '+' | '-' | '*' | '/' | '%'; left: Node; right: Node }
  | { kind: 'call'; fn: FunctionName; args: Node[] };

const FUNCTIONS = {
  pow: { arity: 2, apply: (a: number[]) => Math.pow(a[0]!, a[1]!) },
  exp: { arity: 1, apply: (a: number[]) => Math.exp(a[0]!) },
  sqrt: { arity: 1, apply: (a: number[]) => Math.sqrt(a[0]!) },
  abs: { arity: 1, apply: (a: number[]) => Math.abs(a[0]!) },
  floor: { arity: 1, apply: (a: number[]) => Math.floor(a[0]!) },
  ceil: { arity: 1, apply: (a: number[]) => Math.ceil(a[0]!) },
  round: { arity: 1, apply: (a: number[]) => Math.round(a[0]!) },
  min: { arity: 2, apply: (a: number[]) => Math.min(a[0]!, a[1]!) },
  max: { arity: 2, apply: (a: number[]) => Math.max(a[0]!, a[1]!) },
} as const;
type FunctionName = keyof typeof FUNCTIONS;

const MAX_LENGTH = 1000;
const MAX_DEPTH = 64;

type Token =
  | { type: 'number'; value: number; at: number }
  | { type: 'name'; value: string; at: number }
  | { type: 'punct'; value: string; at: number }
  | { type: 'end'; at: number };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const number = /^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(source.slice(i));
    if (number) {
      tokens.push({ type: 'number', value: Number(number[0]), at: i });
      i += number[0].length;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i));
    if (name) {
      tokens.push({ type: 'name', value: name[0], at: i });
      i += name[0].length;
      continue;
    }
    if ('+-*/%(),'.includes(ch)) {
      tokens.push({ type: 'punct', value: ch, at: i });
      i++;
      continue;
    }
    throw new RetryDelayExpressionError(`unexpected character "${ch}" at position ${i + 1}`);
  }
  tokens.push({ type: 'end', at: source.length });
  return tokens;
}

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): Node {
    const node = this.expression();
    const rest = this.peek();
    if (rest.type !== 'end') throw this.unexpected(rest);
    return node;
  }

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private take(): Token {
    return this.tokens[this.index++]!;
  }

  private isPunct(value: string): boolean {
    const token = this.peek();
    return token.type === 'punct' && token.value === value;
  }

  private expect(value: string): void {
    const token = this.take();
    if (token.type !== 'punct' || token.value !== value) {
      throw new RetryDelayExpressionError(`expected "${value}" at position ${token.at + 1}`);
    }
  }

  private unexpected(token: Token): RetryDelayExpressionError {
    if (token.type === 'end') return new RetryDelayExpressionError('unexpected end of expression');
    return new RetryDelayExpressionError(`unexpected "${String(token.value)}" at position ${token.at + 1}`);
  }

  private nest<T>(inner: () => T): T {
    if (++this.depth > MAX_DEPTH) throw new RetryDelayExpressionError('expression nested too deeply');
    try {
      return inner();
    } finally {
      this.depth--;
    }
  }

  private expression(): Node {
    return this.nest(() => {
      let left = this.term();
      while (this.isPunct('+') || this.isPunct('-')) {
        const op = (this.take() as { value: '+' | '-' }).value;
        left = { kind: 'binary', op, left, right: this.term() };
      }
      return left;
    });
  }

  private term(): Node {
    let left = this.unary();
    while (this.isPunct('*') || this.isPunct('/') || this.isPunct('%')) {
      const op = (this.take() as { value: '*' | '/' | '%' }).value;
      left = { kind: 'binary', op, left, right: this.unary() };
    }
    return left;
  }

  private unary(): Node {
    if (this.isPunct('-')) {
      this.take();
      return this.nest(() => ({ kind: 'negate', operand: this.unary() }));
    }
    if (this.isPunct('+')) {
      this.take();
      return this.nest(() => this.unary());
    }
    return this.primary();
  }

  private primary(): Node {
    const token = this.take();
    if (token.type === 'number') return { kind: 'number', value: token.value };
    if (token.type === 'punct' && token.value === '(') {
      const inner = this.expression();
      this.expect(')');
      return inner;
    }
    if (token.type === 'name') {
      if (token.value === 'retried') return { kind: 'retried' };
      if (!Object.hasOwn(FUNCTIONS, token.value)) {
        throw new RetryDelayExpressionError(
          `unknown name "${token.value}" (allowed: retried, ${Object.keys(FUNCTIONS).join(', ')})`,
        );
      }
      const fn = token.value as FunctionName;
      this.expect('(');
      const args: Node[] = [];
      if (!this.isPunct(')')) {
        args.push(this.expression());
        while (this.isPunct(',')) {
          this.take();
          args.push(this.expression());
        }
      }
      this.expect(')');
      if (args.length !== FUNCTIONS[fn].arity) {
        throw new RetryDelayExpressionError(`${fn} takes ${FUNCTIONS[fn].arity} argument(s), got ${args.length}`);
      }
      return { kind: 'call', fn, args };
    }
    throw this.unexpected(token);
  }
}

function evaluate(node: Node, retried: number): number {
  switch (node.kind) {
    case 'number':
      return node.value;
    case 'retried':
      return retried;
    case 'negate':
      return -evaluate(node.operand, retried);
    case 'binary': {
      const left = evaluate(node.left, retried);
      const right = evaluate(node.right, retried);
      switch (node.op) {
        case '+':
          return left + right;
        case '-':
          return left - right;
        case '*':
          return left * right;
        case '/':
          return left / right;
        case '%':
          return left % right;
      }
      break;
    }
    case 'call':
      return FUNCTIONS[node.fn].apply(node.args.map((arg) => evaluate(arg, retried)));
  }
  return Number.NaN;
}

/** A parsed retry-delay expression; `delayMs(retried)` gives the wait before the next retry. */
export class RetryDelayExpression {
  private constructor(
    readonly source: string,
    private readonly root: Node,
  ) {}

  /** Parses an expression; throws RetryDelayExpressionError with a reason when it is invalid. */
  static parse(source: string): RetryDelayExpression {
    if (source.trim() === '') throw new RetryDelayExpressionError('empty expression');
    if (source.length > MAX_LENGTH) throw new RetryDelayExpressionError(`longer than ${MAX_LENGTH} characters`);
    return new RetryDelayExpression(source, new Parser(tokenize(source)).parse());
  }

  /**
   * The raw value in milliseconds for `retried` retries done so far (0 before the first retry).
   * NaN or infinite results are returned as they are; the caller decides the fallback.
   */
  evaluate(retried: number): number {
    return evaluate(this.root, retried);
  }
}
