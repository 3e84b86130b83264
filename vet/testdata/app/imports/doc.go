// Package imports holds an agent test that imports what it must not.
package imports
