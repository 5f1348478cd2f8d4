// Package readlimit reads inputs whole without ever holding more than a
// stated number of bytes: a key, a signature, a trusted key set, a profile, a
// proposal, a document or stdin given as /dev/zero, an endless pipe or a
// sparse 1 TB file fails as soon as one byte past its limit arrives, with a
// *TooLargeError that states the limit, instead of growing memory until the
// machine gives out. It is the one mechanism every command's whole-input read
// goes through, and it holds the limit of each kind of input (Limits), so the
// limits are documented and tested in one place. It opens files for reading
// only and never writes.
package readlimit
