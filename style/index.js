import './base.css';
import './report.css';
