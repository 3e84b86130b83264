package sanitize

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentvcr/agentvcr/internal/atomicfile"
)

// ErrRefused is what Dir returns, wrapped, when the leak check refused a
// file. Each refusal is in DirReport.Refused.
var ErrRefused = errors.New("refused")

// ErrNoFiles is what Dir returns, wrapped, when its input directory
// holds no *.json file: most often the wrong directory.
var ErrNoFiles = errors.New("no *.json file")

// DirOptions configures Dir. The zero value writes nothing unless every
// file passes.
type DirOptions struct {
	// SkipRefused writes the files that passed even when others were
	// refused. Dir still returns ErrRefused.
	SkipRefused bool
}

// DirReport is what a Dir run did, file by file. It holds paths and
// errors, never a value.
type DirReport struct {
	Files   []string     // every *.json file below the input, in lexical order
	Written []string     // the files written below the output
	Refused []*LeakError // one per refused file, in Files' order
}

// Dir sanitizes every *.json file below in into the same relative place
// below out, all or nothing. Every file is learned before any is
// rewritten, so a name learned in one file is replaced in all of them;
// every file is rewritten and leak-checked before the first is written.
// When the leak check refuses a file, Dir writes nothing (or, with
// SkipRefused, only the files that passed) and returns an error wrapping
// ErrRefused; the report names each refusal. A file that cannot be read
// ends the run before anything is written, with its error (fs.ErrNotExist
// and the like, so a caller can tell bad input apart).
func (s *Sanitizer) Dir(ctx context.Context, in, out string, opts DirOptions) (*DirReport, error) {
	rep := &DirReport{}
	files, err := JSONFiles(in)
	if err != nil {
		return rep, err
	}
	if len(files) == 0 {
		return rep, fmt.Errorf("%s holds %w", in, ErrNoFiles)
	}
	rep.Files = files
	docs := make([][]byte, len(files))
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if docs[i], err = os.ReadFile(f); err != nil {
			return rep, err
		}
		if err := s.Learn(docs[i], f); err != nil {
			return rep, err
		}
	}
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if docs[i], err = s.Sanitize(docs[i], f); err != nil {
			var leak *LeakError
			if !errors.As(err, &leak) {
				return rep, err
			}
			rep.Refused = append(rep.Refused, leak)
		}
	}
	refused := len(rep.Refused)
	if refused > 0 && !opts.SkipRefused {
		return rep, fmt.Errorf("%w: %d of %d files; wrote nothing", ErrRefused, refused, len(files))
	}
	for i, f := range files {
		if docs[i] == nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		rel, err := filepath.Rel(in, f)
		if err != nil {
			return rep, err
		}
		dst := filepath.Join(out, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return rep, err
		}
		if err := atomicfile.Write(dst, 0o644, func(w io.Writer) error {
			_, err := w.Write(docs[i])
			return err
		}); err != nil {
			return rep, err
		}
		rep.Written = append(rep.Written, dst)
	}
	if refused > 0 {
		return rep, fmt.Errorf("%w: %d of %d files; wrote the other %d", ErrRefused, refused, len(files), len(files)-refused)
	}
	return rep, nil
}

// JSONFiles lists the *.json files below dir, in lexical order: the
// files Dir reads, and those a check of dir should read.
func JSONFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".json") {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}
