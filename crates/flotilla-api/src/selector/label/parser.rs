//! Lexer and recursive-descent parser for the label selector string, mirroring the token rules
//! of upstream's `labels.Lexer`/`labels.Parser` (selector.go) so that the same inputs are accepted
//! and rejected with the same messages.

use std::collections::BTreeSet;

use super::{Operator, Requirement, SelectorError, requirement_errors};
use crate::validation::{FieldError, is_qualified_name};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

#[derive(Debug, Clone)]
struct Item<'a> {
    token: Token,
    literal: &'a str,
    position: usize,
}

/// Whether `in`/`notin` are keywords (after a key) or plain identifiers (keys and values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn keyword(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

/// Splits the input into tokens. Like upstream, a NUL byte reads as the end of the input.
fn lex(input: &str) -> Vec<Item<'_>> {
    let bytes = input.as_bytes();
    let mut pos = 0;
    let mut items = Vec::new();
    let read = |pos: &mut usize| -> u8 {
        let c = bytes.get(*pos).copied().unwrap_or(0);
        if *pos < bytes.len() {
            *pos += 1;
        }
        c
    };
    loop {
        let mut c = read(&mut pos);
        while is_whitespace(c) {
            c = read(&mut pos);
        }
        if c == 0 {
            items.push(Item {
                token: Token::EndOfString,
                literal: "",
                position: pos,
            });
            return items;
        }
        pos -= 1;
        let start = pos;
        if is_special(c) {
            // Longest run of special characters that still forms a token.
            let mut best: Option<(Token, usize)> = None;
            while pos < bytes.len() && is_special(bytes[pos]) {
                pos += 1;
                match keyword(&input[start..pos]) {
                    Some(token) => best = Some((token, pos)),
                    None if best.is_some() => break,
                    None => {}
                }
            }
            // Every single special character is a token, so `best` is always set.
            let (token, end) = best.unwrap_or((Token::Identifier, pos));
            pos = end;
            items.push(Item {
                token,
                literal: &input[start..end],
                position: start,
            });
        } else {
            while pos < bytes.len()
                && bytes[pos] != 0
                && !is_special(bytes[pos])
                && !is_whitespace(bytes[pos])
            {
                pos += 1;
            }
            let literal = &input[start..pos];
            if bytes.get(pos) == Some(&0) {
                pos += 1; // upstream consumes the NUL that ends an identifier
            }
            let token = keyword(literal).unwrap_or(Token::Identifier);
            items.push(Item {
                token,
                literal,
                position: start,
            });
        }
    }
}

struct Parser<'a> {
    items: Vec<Item<'a>>,
    position: usize,
}

impl<'a> Parser<'a> {
    fn item(&self, index: usize, context: Context) -> Item<'a> {
        let last = self.items.len() - 1; // the lexer always ends with EndOfString
        let mut item = self.items[index.min(last)].clone();
        if context == Context::Values && matches!(item.token, Token::In | Token::NotIn) {
            item.token = Token::Identifier;
        }
        item
    }

    fn lookahead(&self, context: Context) -> Item<'a> {
        self.item(self.position, context)
    }

    fn consume(&mut self, context: Context) -> Item<'a> {
        let item = self.item(self.position, context);
        self.position += 1;
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, SelectorError> {
        let mut requirements = Vec::new();
        loop {
            let next = self.lookahead(Context::Values);
            match next.token {
                Token::Identifier | Token::DoesNotExist => {
                    requirements.push(self.parse_requirement()?);
                    let after = self.consume(Context::Values);
                    match after.token {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let following = self.lookahead(Context::Values);
                            if !matches!(following.token, Token::Identifier | Token::DoesNotExist) {
                                return Err(syntax(
                                    &following,
                                    "expected: identifier after ','",
                                    false,
                                ));
                            }
                        }
                        _ => return Err(syntax(&after, "expected: ',' or 'end of string'", false)),
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => {
                    return Err(syntax(
                        &next,
                        "expected: !, identifier, or 'end of string'",
                        false,
                    ));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, SelectorError> {
        let start = self.lookahead(Context::Values).position;
        let (key, inferred) = self.parse_key_and_infer_operator()?;
        let (operator, values) = match inferred {
            Some(operator) => (operator, BTreeSet::new()),
            None => {
                let operator = self.parse_operator()?;
                let values = match operator {
                    Operator::In | Operator::NotIn => self.parse_values()?,
                    _ => self.parse_exact_value()?,
                };
                (operator, values)
            }
        };
        let values: Vec<String> = values.into_iter().collect();
        let errors = requirement_errors(key, operator, &values);
        if !errors.is_empty() {
            return Err(SelectorError::InvalidRequirement {
                errors,
                position: start,
                in_requirement: true,
            });
        }
        Ok(Requirement {
            key: key.to_owned(),
            operator,
            values: values.into_iter().collect(),
        })
    }

    fn parse_key_and_infer_operator(
        &mut self,
    ) -> Result<(&'a str, Option<Operator>), SelectorError> {
        let mut item = self.consume(Context::Values);
        let mut operator = None;
        if item.token == Token::DoesNotExist {
            operator = Some(Operator::DoesNotExist);
            item = self.consume(Context::Values);
        }
        if item.token != Token::Identifier {
            return Err(syntax(&item, "expected: identifier", true));
        }
        let key_errors = is_qualified_name(item.literal);
        if !key_errors.is_empty() {
            let errors = vec![FieldError::invalid(
                "key",
                item.literal,
                key_errors.join("; "),
            )];
            return Err(SelectorError::InvalidRequirement {
                errors,
                position: item.position,
                in_requirement: true,
            });
        }
        if operator.is_none()
            && matches!(
                self.lookahead(Context::Values).token,
                Token::EndOfString | Token::Comma
            )
        {
            operator = Some(Operator::Exists);
        }
        Ok((item.literal, operator))
    }

    fn parse_operator(&mut self) -> Result<Operator, SelectorError> {
        let item = self.consume(Context::KeyAndOperator);
        Ok(match item.token {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => {
                return Err(syntax(
                    &item,
                    "expected: in, notin, =, ==, !=, gt, lt",
                    true,
                ));
            }
        })
    }

    fn parse_values(&mut self) -> Result<BTreeSet<String>, SelectorError> {
        let open = self.consume(Context::Values);
        if open.token != Token::OpenPar {
            // Upstream's message has no comma here.
            return Err(SelectorError::Syntax {
                message: format!("found '{}' expected: '('", open.literal),
                found: open.literal.to_owned(),
                position: open.position,
                in_requirement: true,
            });
        }
        let next = self.lookahead(Context::Values);
        match next.token {
            Token::Identifier | Token::Comma => {
                let values = self.parse_identifiers_list()?;
                let close = self.consume(Context::Values);
                if close.token != Token::ClosedPar {
                    // Upstream names the token that started the list here.
                    return Err(syntax(&next, "expected: ')'", true));
                }
                Ok(values)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(BTreeSet::from([String::new()]))
            }
            _ => Err(syntax(&next, "expected: ',', ')' or identifier", true)),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<BTreeSet<String>, SelectorError> {
        let mut values = BTreeSet::new();
        loop {
            let item = self.consume(Context::Values);
            match item.token {
                Token::Identifier => {
                    values.insert(item.literal.to_owned());
                    let next = self.lookahead(Context::Values);
                    match next.token {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(values),
                        _ => return Err(syntax(&next, "expected: ',' or ')'", true)),
                    }
                }
                Token::Comma => {
                    // Empty values around commas: `(,a)`, `(a,)`, `(a,,b)` all hold "".
                    if values.is_empty() {
                        values.insert(String::new());
                    }
                    match self.lookahead(Context::Values).token {
                        Token::ClosedPar => {
                            values.insert(String::new());
                            return Ok(values);
                        }
                        Token::Comma => {
                            values.insert(String::new());
                        }
                        _ => {}
                    }
                }
                _ => return Err(syntax(&item, "expected: ',', or identifier", true)),
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<BTreeSet<String>, SelectorError> {
        if matches!(
            self.lookahead(Context::Values).token,
            Token::EndOfString | Token::Comma
        ) {
            return Ok(BTreeSet::from([String::new()]));
        }
        let item = self.consume(Context::Values);
        if item.token == Token::Identifier {
            return Ok(BTreeSet::from([item.literal.to_owned()]));
        }
        Err(syntax(&item, "expected: identifier", true))
    }
}

fn syntax(item: &Item<'_>, expected: &str, in_requirement: bool) -> SelectorError {
    SelectorError::Syntax {
        message: format!("found '{}', {expected}", item.literal),
        found: item.literal.to_owned(),
        position: item.position,
        in_requirement,
    }
}

/// Parses `input` into requirements in input order.
pub(super) fn parse(input: &str) -> Result<Vec<Requirement>, SelectorError> {
    Parser {
        items: lex(input),
        position: 0,
    }
    .parse()
}
