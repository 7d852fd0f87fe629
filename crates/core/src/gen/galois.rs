//! Finite fields GF(q) for prime powers q = p^k, as the Slim Fly (MMS)
//! construction needs: elements are the integers 0..q, read as base-p
//! digit vectors (polynomial coefficients); multiplication is modulo a
//! monic irreducible polynomial found by search. Sizes used by fabrics are
//! small (q below a few hundred), so full tables are cheap and simple.

#[derive(Clone, Debug)]
pub struct Field {
    q: usize,
    add: Vec<usize>,
    mul: Vec<usize>,
}

impl Field {
    /// GF(q), or why not: q must be a prime power ≥ 2.
    pub fn new(q: usize) -> Result<Field, String> {
        let (p, k) = prime_power(q).ok_or_else(|| format!("q = {q} is not a prime power"))?;
        if q > 256 {
            return Err(format!("q = {q} is too large (at most 256: Slim Fly switches would exceed 254 ports anyway)"));
        }
        let add = table(q, |a, b| digitwise(a, b, p, k, |x, y| (x + y) % p));
        if k == 1 {
            return Ok(Field {
                q,
                add,
                mul: table(q, |a, b| a * b % p),
            });
        }
        // Monic degree-k polynomials are p^k + tail with tail < p^k; the
        // product table makes a field exactly when the polynomial is
        // irreducible, i.e. every non-zero element has an inverse.
        for tail in 0..q {
            let mul = table(q, |a, b| poly_mul_mod(a, b, p, k, tail));
            let field = Field {
                q,
                add: add.clone(),
                mul,
            };
            if (1..q).all(|a| (1..q).any(|b| field.mul(a, b) == 1)) {
                return Ok(field);
            }
        }
        Err(format!(
            "no irreducible polynomial of degree {k} over GF({p}) found"
        ))
    }

    pub fn order(&self) -> usize {
        self.q
    }

    pub fn add(&self, a: usize, b: usize) -> usize {
        self.add[a * self.q + b]
    }

    pub fn mul(&self, a: usize, b: usize) -> usize {
        self.mul[a * self.q + b]
    }

    pub fn neg(&self, a: usize) -> usize {
        (0..self.q).find(|&b| self.add(a, b) == 0).unwrap_or(0)
    }

    pub fn sub(&self, a: usize, b: usize) -> usize {
        self.add(a, self.neg(b))
    }

    /// a / b for b ≠ 0.
    pub fn div(&self, a: usize, b: usize) -> usize {
        let inverse = (1..self.q)
            .find(|&i| self.mul(b, i) == 1)
            .expect("b has an inverse: b ≠ 0 in a field");
        self.mul(a, inverse)
    }

    /// A generator of the multiplicative group (the smallest one).
    pub fn primitive_element(&self) -> usize {
        (2..self.q)
            .find(|&g| {
                let mut x = g;
                let mut order = 1;
                while x != 1 {
                    x = self.mul(x, g);
                    order += 1;
                }
                order == self.q - 1
            })
            .unwrap_or(1) // GF(2): 1 generates the single non-zero element.
    }

    /// ξ^e.
    pub fn pow(&self, base: usize, e: usize) -> usize {
        (0..e).fold(1, |acc, _| self.mul(acc, base))
    }
}

/// (p, k) with q = p^k, p prime, k ≥ 1.
pub fn prime_power(q: usize) -> Option<(usize, u32)> {
    if q < 2 {
        return None;
    }
    let p = (2..=q).find(|d| q % d == 0)?;
    let mut rest = q;
    let mut k = 0;
    while rest % p == 0 {
        rest /= p;
        k += 1;
    }
    (rest == 1).then_some((p, k))
}

fn table(q: usize, f: impl Fn(usize, usize) -> usize) -> Vec<usize> {
    (0..q * q).map(|i| f(i / q, i % q)).collect()
}

fn digits(mut a: usize, p: usize, k: u32) -> Vec<usize> {
    (0..k)
        .map(|_| {
            let d = a % p;
            a /= p;
            d
        })
        .collect()
}

fn number(d: &[usize], p: usize) -> usize {
    d.iter().rev().fold(0, |acc, &x| acc * p + x)
}

fn digitwise(a: usize, b: usize, p: usize, k: u32, f: impl Fn(usize, usize) -> usize) -> usize {
    let (x, y) = (digits(a, p, k), digits(b, p, k));
    number(
        &x.iter().zip(&y).map(|(&u, &v)| f(u, v)).collect::<Vec<_>>(),
        p,
    )
}

/// a·b modulo the monic polynomial x^k + tail(x) over GF(p).
fn poly_mul_mod(a: usize, b: usize, p: usize, k: u32, tail: usize) -> usize {
    let k = k as usize;
    let (x, y, t) = (
        digits(a, p, k as u32),
        digits(b, p, k as u32),
        digits(tail, p, k as u32),
    );
    let mut prod = vec![0; 2 * k];
    for (i, &u) in x.iter().enumerate() {
        for (j, &v) in y.iter().enumerate() {
            prod[i + j] = (prod[i + j] + u * v) % p;
        }
    }
    // x^d = x^(d-k) · x^k ≡ -x^(d-k) · tail(x).
    for d in (k..2 * k).rev() {
        let c = prod[d];
        if c != 0 {
            prod[d] = 0;
            for (i, &ti) in t.iter().enumerate() {
                prod[d - k + i] = (prod[d - k + i] + (p - c) * ti) % p;
            }
        }
    }
    number(&prod[..k], p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prime_powers_are_recognised() {
        assert_eq!(prime_power(5), Some((5, 1)));
        assert_eq!(prime_power(8), Some((2, 3)));
        assert_eq!(prime_power(9), Some((3, 2)));
        assert_eq!(prime_power(12), None);
        assert_eq!(prime_power(1), None);
    }

    #[test]
    fn field_axioms_hold() {
        for q in [2, 3, 4, 5, 7, 8, 9, 11, 13, 16, 25, 27] {
            let f = Field::new(q).unwrap();
            for a in 0..q {
                assert_eq!(f.add(a, 0), a);
                assert_eq!(f.mul(a, 1), a);
                assert_eq!(f.add(a, f.neg(a)), 0);
                if a != 0 {
                    assert!(
                        (1..q).any(|b| f.mul(a, b) == 1),
                        "q={q} a={a} has no inverse"
                    );
                }
                for b in 0..q {
                    assert_eq!(f.mul(a, b), f.mul(b, a));
                    for c in 0..q {
                        assert_eq!(
                            f.mul(a, f.add(b, c)),
                            f.add(f.mul(a, b), f.mul(a, c)),
                            "q={q}"
                        );
                    }
                }
            }
            let xi = f.primitive_element();
            let mut seen: Vec<usize> = (0..q - 1).map(|e| f.pow(xi, e)).collect();
            seen.sort();
            assert_eq!(
                seen,
                (1..q).collect::<Vec<_>>(),
                "q={q}: ξ={xi} generates every non-zero element"
            );
        }
        assert!(Field::new(6).unwrap_err().contains("not a prime power"));
    }
}
