package launcher

import (
	"fmt"
	"os"
	"path/filepath"
)

// SecretDirName is the folder under a replica's log folder that holds the
// files engines read their API key from (SecretFile), mode 0700.
const SecretDirName = ".keys"

// WriteSecretFiles writes files with mode 0600 and their folders with
// 0700, whatever the umask, and closes a folder that others could read or
// enter (an error if it cannot): a key file must never be readable by
// another user.
func WriteSecretFiles(files []SecretFile) error {
	for _, f := range files {
		dir := filepath.Dir(f.Path)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create the key folder %s: %w", dir, err)
		}
		st, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("key folder %s: %w", dir, err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(dir, 0o700); err != nil {
				return fmt.Errorf("key folder %s is open to other users (%v) and cannot be closed: %w", dir, st.Mode().Perm(), err)
			}
		}
		if err := writePrivate(f.Path, f.Content); err != nil {
			return err
		}
	}
	return nil
}

func writePrivate(path string, content []byte) error {
	tmp := path + ".tmp"
	_ = os.Remove(tmp)
	fh, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write the key file %s: %w", path, err)
	}
	_, werr := fh.Write(content)
	cerr := fh.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write the key file %s: %w", path, werr)
	}
	return nil
}

// RemoveSecretFiles deletes files; missing ones are not an error.
func RemoveSecretFiles(files []SecretFile) {
	for _, f := range files {
		_ = os.Remove(f.Path)
	}
}
