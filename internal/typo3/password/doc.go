// Package password checks TYPO3 v13 backend and frontend password hashes
// (be_users.password, fe_users.password) without PHP, and creates Argon2id
// hashes that TYPO3 accepts.
//
// A hash is assigned to an algorithm the way TYPO3's PasswordHashFactory
// does it: the classes are tried in the order of
// SYS.availablePasswordHashAlgorithms and the first whose isValidSaltedPW
// accepts the hash wins. Supported, in that order:
//
//	argon2i        $argon2i$v=19$m=…,t=…,p=…$salt$hash  (PHP password_hash)
//	argon2id       $argon2id$v=19$m=…,t=…,p=…$salt$hash (TYPO3's default)
//	bcrypt         $2y$NN$…  bcrypt of base64(sha384(password))
//	pbkdf2-sha256  $pbkdf2-sha256$rounds$salt$hash (passlib layout)
//	phpass         $P$…      portable phpass, iterated md5
//	blowfish       $2a$NN$…  plain crypt() bcrypt, no pre-hash
//	md5-crypt      $1$salt$… crypt() MD5
//
// Everything else is refused with a *HashError instead of a plain false, so
// callers can tell "wrong password" from "this account cannot be checked":
// unsalted md5/sha1 hex and plaintext passwords (TYPO3 rejects them too),
// unknown formats (ErrUnsupportedHash), damaged hashes (ErrMalformedHash) and
// hashes whose cost parameters would take unreasonable time or memory to
// check (ErrCostTooHigh). Error messages never contain the hash.
//
// Where PHP's crypt() and Go's primitives disagree on exotic input, the
// package answers false rather than risk accepting a password TYPO3 would
// not: plain-crypt hashes ($2a$, $1$) never match a password containing a
// NUL byte (C strings stop there), and $2a$ never matches one containing
// 0xFF (crypt_blowfish's $2a$ countermeasure alters those). 0xFF is never
// valid UTF-8, and NUL does not come out of a login form in practice.
package password
