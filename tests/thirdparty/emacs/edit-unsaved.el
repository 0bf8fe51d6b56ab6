;;; edit-unsaved.el --- an edit lands in the unsaved buffer; disk untouched; undo works  -*- lexical-binding: t -*-
;; Script (tests/thirdparty/test_eglot.py): edit_file a.py "alpha" -> "beta", then a final text.

(cadenza-test-run
 (lambda ()
   (let* ((buffer (cadenza-test-open "a.py" "name = 'alpha'\n"))
          (session (cadenza-test-start "rename alpha to beta")))
     (cadenza-test-note 'session session)
     (cadenza-test-note 'stop (cadenza-test-wait-end session))
     (with-current-buffer buffer
       (cadenza-test-note 'buffer (buffer-string))
       (cadenza-test-note 'modified (if (buffer-modified-p) t :json-false))
       ;; C-/ as a person would press it: the whole agent edit goes in one step.
       (undo-boundary)
       (let ((last-command nil)) (undo))
       (cadenza-test-note 'after_undo (buffer-string)))
     (cadenza-test-note 'results (vconcat (cadenza-test-tool-results session))))))
