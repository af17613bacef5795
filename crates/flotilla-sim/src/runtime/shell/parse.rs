//! The shell language the simulated containers understand: words with quotes, `$VAR`,
//! `${VAR}`, `$?` and `$(…)`; `;`, newlines, `&&`, `||`, `|`; `while`/`until`, `for`, `if`,
//! `{ …; }` and `( … )`; `NAME=value` assignments; `#` comments.

/// A piece of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Literal text; `quoted` text is never split into fields.
    Text { text: String, quoted: bool },
    /// `$NAME`, `${NAME}`, `$?`.
    Var { name: String, quoted: bool },
    /// `$(script)`: the script's output.
    Output { script: String, quoted: bool },
}

/// A word before expansion.
pub type Word = Vec<Part>;

/// A parsed script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Simple {
        assignments: Vec<(String, Word)>,
        words: Vec<Word>,
    },
    Sequence(Vec<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Pipe(Vec<Node>),
    Loop {
        condition: Box<Node>,
        body: Box<Node>,
        until: bool,
    },
    For {
        name: String,
        items: Vec<Word>,
        body: Box<Node>,
    },
    If {
        branches: Vec<(Node, Node)>,
        otherwise: Option<Box<Node>>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(Word),
    Op(&'static str),
}

/// Why a script does not parse; `incomplete` when more input could complete it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
    pub incomplete: bool,
}

fn error(message: impl Into<String>) -> ParseError {
    ParseError {
        message: message.into(),
        incomplete: false,
    }
}

fn incomplete(message: impl Into<String>) -> ParseError {
    ParseError {
        message: message.into(),
        incomplete: true,
    }
}

const OPERATORS: [&str; 9] = ["&&", "||", ";;", ";", "\n", "|", "&", "(", ")"];

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn tokenize(source: &str) -> Result<Vec<Token>, ParseError> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    let mut word: Word = Vec::new();
    let mut in_word = false;
    let push_text = |word: &mut Word, c: char, quoted: bool| match word.last_mut() {
        Some(Part::Text { text, quoted: q }) if *q == quoted => text.push(c),
        _ => word.push(Part::Text {
            text: c.to_string(),
            quoted,
        }),
    };
    let finish = |tokens: &mut Vec<Token>, word: &mut Word, in_word: &mut bool| {
        if *in_word {
            tokens.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\r' => {
                finish(&mut tokens, &mut word, &mut in_word);
                i += 1;
            }
            '#' if !in_word => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\\' => {
                in_word = true;
                match chars.get(i + 1) {
                    Some('\n') => {}
                    Some(&next) => push_text(&mut word, next, true),
                    None => push_text(&mut word, '\\', true),
                }
                i += 2;
            }
            '\'' => {
                in_word = true;
                let end = chars[i + 1..]
                    .iter()
                    .position(|&c| c == '\'')
                    .ok_or_else(|| incomplete("unterminated quoted string"))?;
                word.push(Part::Text {
                    text: chars[i + 1..i + 1 + end].iter().collect(),
                    quoted: true,
                });
                i += end + 2;
            }
            '"' => {
                in_word = true;
                i += 1;
                // An empty "" is still a word.
                word.push(Part::Text {
                    text: String::new(),
                    quoted: true,
                });
                loop {
                    let Some(&c) = chars.get(i) else {
                        return Err(incomplete("unterminated quoted string"));
                    };
                    match c {
                        '"' => {
                            i += 1;
                            break;
                        }
                        '\\' if matches!(chars.get(i + 1), Some('"' | '\\' | '$' | '`')) => {
                            push_text(&mut word, chars[i + 1], true);
                            i += 2;
                        }
                        '\\' if chars.get(i + 1) == Some(&'\n') => i += 2,
                        '$' => i = dollar(&chars, i, &mut word, true)?,
                        c => {
                            push_text(&mut word, c, true);
                            i += 1;
                        }
                    }
                }
            }
            '$' => {
                in_word = true;
                i = dollar(&chars, i, &mut word, false)?;
            }
            _ => {
                let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
                if let Some(op) = OPERATORS.iter().find(|op| rest.starts_with(**op)) {
                    finish(&mut tokens, &mut word, &mut in_word);
                    tokens.push(Token::Op(op));
                    i += op.chars().count();
                } else {
                    in_word = true;
                    push_text(&mut word, c, false);
                    i += 1;
                }
            }
        }
    }
    finish(&mut tokens, &mut word, &mut in_word);
    Ok(tokens)
}

/// A `$` at `chars[i]`: appends what it expands to and returns the index after it.
fn dollar(chars: &[char], i: usize, word: &mut Word, quoted: bool) -> Result<usize, ParseError> {
    let next = chars.get(i + 1).copied();
    match next {
        Some('(') => {
            if chars.get(i + 2) == Some(&'(') {
                return Err(error("arithmetic expansion $((…)) is not modelled"));
            }
            let mut depth = 1;
            let mut j = i + 2;
            while j < chars.len() {
                match chars[j] {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            if j >= chars.len() {
                return Err(incomplete("unterminated $("));
            }
            word.push(Part::Output {
                script: chars[i + 2..j].iter().collect(),
                quoted,
            });
            Ok(j + 1)
        }
        Some('{') => {
            let end = chars[i + 2..]
                .iter()
                .position(|&c| c == '}')
                .ok_or_else(|| incomplete("unterminated ${"))?;
            let name: String = chars[i + 2..i + 2 + end].iter().collect();
            if !is_name(&name) && !matches!(name.as_str(), "?" | "$" | "#" | "0") {
                return Err(error(format!("${{{name}}}: bad substitution")));
            }
            word.push(Part::Var { name, quoted });
            Ok(i + 3 + end)
        }
        Some(c @ ('?' | '$' | '#' | '0'..='9')) => {
            word.push(Part::Var {
                name: c.to_string(),
                quoted,
            });
            Ok(i + 2)
        }
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            word.push(Part::Var {
                name: chars[i + 1..j].iter().collect(),
                quoted,
            });
            Ok(j)
        }
        _ => {
            word.push(Part::Text {
                text: "$".into(),
                quoted,
            });
            Ok(i + 1)
        }
    }
}

/// The literal text of a word with no quotes or expansions (reserved words, names).
fn plain(word: &Word) -> Option<&str> {
    match word.as_slice() {
        [
            Part::Text {
                text,
                quoted: false,
            },
        ] => Some(text),
        _ => None,
    }
}

const RESERVED: [&str; 14] = [
    "while", "until", "do", "done", "for", "in", "if", "then", "elif", "else", "fi", "{", "}", "!",
];

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

/// Parses a script.
pub fn parse(source: &str) -> Result<Node, ParseError> {
    let mut parser = Parser {
        tokens: tokenize(source)?,
        at: 0,
    };
    let node = parser.list(&[])?;
    match parser.tokens.get(parser.at) {
        None => Ok(node),
        Some(Token::Op(op)) => Err(error(format!(
            "syntax error: unexpected {:?}",
            op.replace('\n', "newline")
        ))),
        Some(Token::Word(w)) => Err(error(format!(
            "syntax error: unexpected \"{}\"",
            plain(w).unwrap_or("word")
        ))),
    }
}

impl Parser {
    fn peek_reserved(&self) -> Option<&'static str> {
        match self.tokens.get(self.at) {
            Some(Token::Word(w)) => {
                plain(w).and_then(|p| RESERVED.iter().find(|r| **r == p).copied())
            }
            _ => None,
        }
    }

    fn peek_op(&self) -> Option<&'static str> {
        match self.tokens.get(self.at) {
            Some(Token::Op(op)) => Some(op),
            _ => None,
        }
    }

    fn skip_newlines(&mut self) {
        while matches!(self.peek_op(), Some("\n" | ";")) {
            self.at += 1;
        }
    }

    fn expect_reserved(&mut self, word: &str) -> Result<(), ParseError> {
        self.skip_newlines();
        if self.peek_reserved() == Some(word) {
            self.at += 1;
            Ok(())
        } else if self.at >= self.tokens.len() {
            Err(incomplete(format!("syntax error: expected \"{word}\"")))
        } else {
            Err(error(format!("syntax error: expected \"{word}\"")))
        }
    }

    /// Commands separated by `;`, `&` or newlines, up to one of `stop` (not consumed), `)`
    /// or the end.
    fn list(&mut self, stop: &[&str]) -> Result<Node, ParseError> {
        let mut items = Vec::new();
        loop {
            self.skip_newlines();
            if self.at >= self.tokens.len()
                || self.peek_op() == Some(")")
                || self.peek_reserved().is_some_and(|r| stop.contains(&r))
            {
                break;
            }
            items.push(self.and_or()?);
            match self.peek_op() {
                Some(";" | "\n" | "&") => self.at += 1,
                _ => break,
            }
        }
        Ok(if items.len() == 1 {
            items.pop().expect("one item")
        } else {
            Node::Sequence(items)
        })
    }

    fn and_or(&mut self) -> Result<Node, ParseError> {
        let mut node = self.pipeline()?;
        while let Some(op @ ("&&" | "||")) = self.peek_op() {
            self.at += 1;
            while self.peek_op() == Some("\n") {
                self.at += 1;
            }
            let right = self.pipeline()?;
            node = if op == "&&" {
                Node::And(Box::new(node), Box::new(right))
            } else {
                Node::Or(Box::new(node), Box::new(right))
            };
        }
        Ok(node)
    }

    fn pipeline(&mut self) -> Result<Node, ParseError> {
        if self.peek_reserved() == Some("!") {
            self.at += 1;
            return Ok(Node::Not(Box::new(self.pipeline()?)));
        }
        let mut stages = vec![self.command()?];
        while self.peek_op() == Some("|") {
            self.at += 1;
            stages.push(self.command()?);
        }
        Ok(if stages.len() == 1 {
            stages.pop().expect("one stage")
        } else {
            Node::Pipe(stages)
        })
    }

    fn command(&mut self) -> Result<Node, ParseError> {
        match self.peek_reserved() {
            Some(kind @ ("while" | "until")) => {
                self.at += 1;
                let condition = self.list(&["do"])?;
                self.expect_reserved("do")?;
                let body = self.list(&["done"])?;
                self.expect_reserved("done")?;
                return Ok(Node::Loop {
                    condition: Box::new(condition),
                    body: Box::new(body),
                    until: kind == "until",
                });
            }
            Some("for") => {
                self.at += 1;
                let name = match self.tokens.get(self.at) {
                    Some(Token::Word(w)) => plain(w).filter(|n| is_name(n)).map(str::to_owned),
                    _ => None,
                }
                .ok_or_else(|| error("syntax error: bad for loop variable"))?;
                self.at += 1;
                let mut items = Vec::new();
                if self.peek_reserved() == Some("in") {
                    self.at += 1;
                    while let Some(Token::Word(w)) = self.tokens.get(self.at) {
                        items.push(w.clone());
                        self.at += 1;
                    }
                }
                self.expect_reserved("do")?;
                let body = self.list(&["done"])?;
                self.expect_reserved("done")?;
                return Ok(Node::For {
                    name,
                    items,
                    body: Box::new(body),
                });
            }
            Some("if") => {
                self.at += 1;
                let mut branches = Vec::new();
                let mut otherwise = None;
                loop {
                    let condition = self.list(&["then"])?;
                    self.expect_reserved("then")?;
                    let body = self.list(&["elif", "else", "fi"])?;
                    branches.push((condition, body));
                    self.skip_newlines();
                    match self.peek_reserved() {
                        Some("elif") => self.at += 1,
                        Some("else") => {
                            self.at += 1;
                            otherwise = Some(Box::new(self.list(&["fi"])?));
                            self.expect_reserved("fi")?;
                            break;
                        }
                        _ => {
                            self.expect_reserved("fi")?;
                            break;
                        }
                    }
                }
                return Ok(Node::If {
                    branches,
                    otherwise,
                });
            }
            Some("{") => {
                self.at += 1;
                let body = self.list(&["}"])?;
                self.expect_reserved("}")?;
                return Ok(body);
            }
            Some(word @ ("do" | "done" | "then" | "elif" | "else" | "fi" | "}" | "in")) => {
                return Err(error(format!("syntax error: unexpected \"{word}\"")));
            }
            _ => {}
        }
        if self.peek_op() == Some("(") {
            self.at += 1;
            let body = self.list(&[])?;
            if self.peek_op() != Some(")") {
                return Err(incomplete("syntax error: expected \")\""));
            }
            self.at += 1;
            return Ok(body);
        }
        let mut assignments = Vec::new();
        let mut words = Vec::new();
        while let Some(Token::Word(w)) = self.tokens.get(self.at) {
            if words.is_empty()
                && let Some(Part::Text {
                    text,
                    quoted: false,
                }) = w.first()
                && let Some((name, value)) = text.split_once('=')
                && is_name(name)
            {
                let mut value_word: Word = Vec::new();
                if !value.is_empty() {
                    value_word.push(Part::Text {
                        text: value.to_owned(),
                        quoted: true,
                    });
                }
                value_word.extend(w[1..].iter().cloned());
                assignments.push((name.to_owned(), value_word));
            } else {
                words.push(w.clone());
            }
            self.at += 1;
        }
        if assignments.is_empty() && words.is_empty() {
            return match self.tokens.get(self.at) {
                None => Err(incomplete("syntax error: unexpected end of file")),
                Some(Token::Op(op)) => Err(error(format!(
                    "syntax error: unexpected {:?}",
                    op.replace('\n', "newline")
                ))),
                Some(Token::Word(_)) => Err(error("syntax error")),
            };
        }
        Ok(Node::Simple { assignments, words })
    }
}
